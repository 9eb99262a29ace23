package dev.omnium.jdbc;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.postgresql.PGProperty;

/**
 * omnium's own background sessions (the primary's WAL sampler, each replica's lag watcher, the
 * heartbeat writer), one per server and kind for every router of the process that would open the
 * same one: same server, database, user and application name, same connect settings, same work
 * (table, interval).
 * A JVM that makes many routers (several data sources, per-tenant settings, one per set of pgjdbc
 * properties as pgjdbc's own test suite does) keeps one watcher per replica and one sampler per
 * primary, sending one small query per {@code heartbeatInterval} to each server, instead of one
 * per router.
 *
 * <p>Settings that only change how a client uses an open session ({@link #CLIENT_SIDE}: fetch
 * sizes, caches, type mappings, logging) are not part of the key; the credentials are only as a
 * hash (see {@code Router}), and a rotation reaches a shared session through every router that
 * holds it ({@link RouterCredentials#follow}).
 */
final class BackgroundSessions {
  /** pgjdbc settings that change nothing of where or how a session connects, nor of our queries. */
  static final Set<String> CLIENT_SIDE = Set.of(PGProperty.ADAPTIVE_FETCH.getName(),
      PGProperty.ADAPTIVE_FETCH_MAXIMUM.getName(), PGProperty.ADAPTIVE_FETCH_MINIMUM.getName(),
      PGProperty.AUTOSAVE.getName(), PGProperty.BINARY_TRANSFER.getName(),
      PGProperty.BINARY_TRANSFER_DISABLE.getName(), PGProperty.BINARY_TRANSFER_ENABLE.getName(),
      PGProperty.CANCEL_SIGNAL_TIMEOUT.getName(), PGProperty.CLEANUP_SAVEPOINTS.getName(),
      PGProperty.CONVERT_BOOLEAN_TO_NUMERIC.getName(),
      PGProperty.DATABASE_METADATA_CACHE_FIELDS.getName(),
      PGProperty.DATABASE_METADATA_CACHE_FIELDS_MIB.getName(),
      PGProperty.DEFAULT_ROW_FETCH_SIZE.getName(), PGProperty.DISABLE_COLUMN_SANITISER.getName(),
      PGProperty.ESCAPE_SYNTAX_CALL_MODE.getName(), PGProperty.HIDE_UNPRIVILEGED_OBJECTS.getName(),
      "loggerFile", "loggerLevel", // PGProperty's, deprecated there
      PGProperty.LOG_SERVER_ERROR_DETAIL.getName(), PGProperty.LOG_UNCLOSED_CONNECTIONS.getName(),
      PGProperty.MAX_RESULT_BUFFER.getName(), PGProperty.PREPARED_STATEMENT_CACHE_QUERIES.getName(),
      PGProperty.PREPARED_STATEMENT_CACHE_SIZE_MIB.getName(),
      PGProperty.QUOTE_RETURNING_IDENTIFIERS.getName(),
      PGProperty.REWRITE_BATCHED_INSERTS.getName(), PGProperty.STRING_TYPE.getName(),
      PGProperty.UNKNOWN_LENGTH.getName(), PGProperty.XML_FACTORY_FACTORY.getName(),
      PGProperty.CURRENT_SCHEMA.getName());

  private static final Map<Object, Shared<?>> SHARED = new HashMap<>(); // guarded by class

  private BackgroundSessions() { }

  /**
   * What decides whether two routers' background sessions of {@code kind} are the same one: the
   * URL, {@code props} (a route's physical properties, application name included) without
   * credentials and {@link #CLIENT_SIDE} settings, and {@code work} (the table, interval... it
   * works with).
   */
  static Object key(String kind, String url, Properties props, Object... work) {
    TreeMap<String, String> connect = new TreeMap<>();
    for (String k : props.stringPropertyNames()) {
      if (Secrets.isSecretKey(k) || CLIENT_SIDE.contains(k)) continue;
      connect.put(k, props.getProperty(k));
    }
    List<Object> key = new ArrayList<>();
    key.add(kind);
    key.add(url);
    key.add(connect);
    key.addAll(List.of(work));
    return List.copyOf(key);
  }

  /**
   * A hold on the background session of {@code key}: the one already there, or a new one from
   * {@code create}, which must return it started (its hooks set first: see
   * {@link Shared#endpoints}). Release it with {@link Lease#release()}.
   */
  @SuppressWarnings("unchecked")
  static synchronized <T extends IntervalSession> Lease<T> acquire(Object key,
      Supplier<Shared<T>> create) {
    Shared<T> shared = (Shared<T>) SHARED.get(key);
    if (shared == null) {
      shared = create.get();
      shared.key = key;
      SHARED.put(key, shared);
    }
    shared.holders++;
    return new Lease<>(shared);
  }

  /** How many background sessions the process holds now (tests, JMX). */
  static synchronized int size() {
    return SHARED.size();
  }

  /**
   * One background session and the connector it reconnects with; for a lag watcher also the
   * replica endpoints of every router holding it, which its probe's findings reach.
   */
  static final class Shared<T extends IntervalSession> {
    final T session;
    final PgConnector connector;
    /** The endpoints told of a role change or a probe timeout (lag watchers only). */
    final List<ReplicaEndpoint> endpoints = new CopyOnWriteArrayList<>();
    /** The routers told of the connector's logins (primary side only: see {@link Followers}). */
    final Followers followers;
    private Object key;
    private int holders; // guarded by BackgroundSessions.class

    /** A replica-side session: its logins prove nothing (see {@link RouterCredentials}). */
    Shared(T session, PgConnector connector) {
      this(session, connector, null);
    }

    /**
     * @param followers the routers {@code connector} reports its logins to, made for it before its
     *     first login ({@link Followers#reportingFrom}); null: none
     */
    Shared(T session, PgConnector connector, Followers followers) {
      this.session = session;
      this.connector = connector;
      this.followers = followers;
    }
  }

  /**
   * The routers that hold a shared primary-side session (WAL sampler, heartbeat writer). Its
   * logins prove or refute a credential set as a router's own would: each router whose set is the
   * one the session logs in with is told, under its own digest (a router's digests are salted
   * with its own salt, so the set is compared by its secrets, which are never printed). A password
   * changed on the server thus withdraws the proof of every router that used it.
   */
  static final class Followers implements PgConnector.Logins {
    private final List<RouterCredentials> routers = new CopyOnWriteArrayList<>();
    /** The secrets ({@code OmniumConfig.secretsKey()}) of the set the connector logs in with. */
    private volatile Object secretsKey;

    private Followers(Object secretsKey) {
      this.secretsKey = secretsKey;
    }

    /** Reports {@code connector}'s logins, made with {@code config}'s secrets, from now on. */
    static Followers reportingFrom(PgConnector connector, OmniumConfig config) {
      Followers f = new Followers(config.secretsKey());
      connector.reportTo(f, "shared");
      return f;
    }

    void add(RouterCredentials router) {
      routers.add(router);
    }

    void remove(RouterCredentials router) {
      routers.remove(router);
    }

    /** A router rotated the connector's credentials to {@code config}'s. */
    void secretsOf(OmniumConfig config) {
      secretsKey = config.secretsKey();
    }

    @Override
    public void loggedIn(String digest) {
      Object k = secretsKey;
      for (RouterCredentials r : routers) r.followedLogin(k, null);
    }

    @Override
    public void refused(String digest, SQLException e) {
      Object k = secretsKey;
      for (RouterCredentials r : routers) r.followedLogin(k, e);
    }
  }

  /** One router's hold on a shared background session. */
  static final class Lease<T extends IntervalSession> {
    private final Shared<T> shared;
    private boolean released; // guarded by BackgroundSessions.class

    private Lease(Shared<T> shared) {
      this.shared = shared;
    }

    T session() {
      return shared.session;
    }

    PgConnector connector() {
      return shared.connector;
    }

    Shared<T> shared() {
      return shared;
    }

    /**
     * Ends this hold, once.
     *
     * @return the session when this was its last hold: the caller stops and closes it; else null
     */
    T release() {
      synchronized (BackgroundSessions.class) {
        if (released) return null;
        released = true;
        if (--shared.holders > 0) return null;
        SHARED.remove(shared.key, shared);
        return shared.session;
      }
    }
  }
}
