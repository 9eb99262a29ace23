package dev.omnium.jdbc;

import java.sql.SQLException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The credentials a router's physical connects use, and the credential sets ({@link CredentialSet})
 * a login proved. A set becomes the router's only after a login with it succeeded (rotated
 * passwords, IAM tokens, Vault leases reach every new session of every route while existing
 * sessions live on); a login that failed changes nothing. A proof is remembered by its salted
 * digest, never the secret, and is forgotten when a login with the set is refused for its
 * credentials (class 28: a password changed on the server), or after {@code maxLifetime} without
 * a login that used it: the next connect with the set then logs in again (docs/reliability.md,
 * "No session without proven credentials").
 *
 * <p>The primary side's connectors (primary, fallback, heartbeat writer, WAL sampler) take a set
 * at once when the logical connection's own login on the primary proved it. The replica side's
 * (replica pools, lag watchers) log in elsewhere, possibly as {@code replicaUser}: each tries the
 * new set at its next login and keeps it once that succeeds; while the replica refuses it (a
 * standby that has not replayed the new password yet), the set it had still serves.
 */
final class RouterCredentials implements PgConnector.Logins {
  private record Tracked(Route route, PgConnector connector,
      BackgroundSessions.Followers followers) {
    Tracked(Route route, PgConnector connector) {
      this(route, connector, null);
    }
  }

  /** Proofs kept at most: rotating tokens make a new set per connect. */
  static final int PROOFS = 64;

  private final List<Tracked> connectors = new CopyOnWriteArrayList<>();
  /**
   * Connectors of background sessions shared with other routers ({@link BackgroundSessions}): they
   * take the sets this router proves, but report their logins to no router and live on after it.
   */
  private final List<Tracked> followed = new CopyOnWriteArrayList<>();
  private final byte[] salt = CredentialSet.salt();
  private final long ttlNanos;
  /** Digest to the nanoTime of the last login that used it; least recently proven first. */
  private final Map<String, Long> proofs = new LinkedHashMap<>(16, 0.75f, true);
  /** The set the router's connectors log in with. */
  private volatile String current;
  /** Its secrets ({@link OmniumConfig#secretsKey()}): what a shared session's login is told by. */
  private Object currentSecrets;
  /** A login with the current set was refused for its credentials since it was last proven. */
  private volatile boolean currentRefused;
  /** When a login on the primary side last succeeded (nanoTime); 0: never. */
  private volatile long loggedInNanos;

  /** @param config the configuration the router starts with (not proven by this) */
  RouterCredentials(OmniumConfig config) {
    this(config, config.maxLifetime().toNanos());
  }

  /** @param ttlNanos how long a proof lasts without a login that used it */
  RouterCredentials(OmniumConfig config, long ttlNanos) {
    this.current = digest(config);
    this.currentSecrets = config.secretsKey();
    this.ttlNanos = ttlNanos;
  }

  PgConnector track(Route route, PgConnector connector) {
    connectors.add(new Tracked(route, connector));
    connector.reportTo(route.replicaSide() ? null : this, current);
    return connector;
  }

  /**
   * A connector this router shares with other routers ({@link BackgroundSessions}): it takes this
   * router's rotated credentials too, but its life is not this router's.
   */
  void follow(Route route, BackgroundSessions.Shared<?> shared) {
    followed.add(new Tracked(route, shared.connector, shared.followers));
    if (shared.followers != null) shared.followers.add(this);
  }

  void unfollow(BackgroundSessions.Shared<?> shared) {
    followed.removeIf(t -> t.connector() == shared.connector);
    if (shared.followers != null) shared.followers.remove(this);
  }

  /**
   * A login of a shared background session this router follows, made with the secrets
   * {@code secretsKey}: a login with the router's own set when they are its current set's.
   *
   * @param refusal null: it succeeded
   */
  void followedLogin(Object secretsKey, SQLException refusal) {
    String d;
    synchronized (this) {
      if (secretsKey == null || !secretsKey.equals(currentSecrets)) return;
      d = current;
    }
    if (refusal == null) {
      loggedIn(d);
    } else {
      refused(d, refusal);
    }
  }

  /** Router close: see {@link PgConnector#closing()}. */
  void closing() {
    for (Tracked t : connectors) t.connector().closing();
  }

  /** Router close, once its pools have shut down: see {@link PgConnector#closeUnpooled()}. */
  void closeUnpooled() {
    for (Tracked t : connectors) t.connector().closeUnpooled();
  }

  /** The digest of {@code config}'s credential set under this router's salt. */
  String digest(OmniumConfig config) {
    return CredentialSet.digest(salt, config);
  }

  /** Whether {@code digest} is the set the router's own connectors use. */
  boolean isCurrent(String digest) {
    return digest.equals(current);
  }

  /** A login proved {@code digest} within {@code maxLifetime}, and none was refused since. */
  synchronized boolean isProven(String digest) {
    Long at = proofs.get(digest);
    return at != null && System.nanoTime() - at < ttlNanos;
  }

  /**
   * DataSource mode, at every {@code getConnection()} (one volatile read): a login with the
   * router's own set was refused since it was proven; the next connection must log in again.
   */
  boolean currentRefused() {
    return currentRefused;
  }

  /**
   * A login with {@code config}'s credentials succeeded on the primary: remembered, and when it is
   * not the router's set, it becomes the router's (rotation).
   */
  void proven(OmniumConfig config, String digest) {
    loggedInNanos = System.nanoTime();
    synchronized (this) {
      remember(digest);
      if (digest.equals(current)) {
        currentRefused = false;
        return;
      }
      for (List<Tracked> list : List.of(connectors, followed)) {
        for (Tracked t : list) {
          Map<String, String> secrets = config.secrets(t.route());
          if (t.route().replicaSide()) {
            t.connector().offerSecrets(secrets, digest);
          } else {
            t.connector().useSecrets(secrets, digest);
            if (t.followers() != null) t.followers().secretsOf(config);
          }
        }
      }
      current = digest;
      currentSecrets = config.secretsKey();
      currentRefused = false;
    }
  }

  @Override
  public synchronized void loggedIn(String digest) {
    loggedInNanos = System.nanoTime();
    remember(digest);
    if (digest.equals(current)) currentRefused = false;
  }

  @Override
  public synchronized void refused(String digest, SQLException e) {
    if (!SqlStates.credentialsRefused(e)) return;
    proofs.remove(digest);
    if (digest.equals(current)) currentRefused = true;
  }

  /** Whether a login on the primary side succeeded within {@code windowNanos}. */
  boolean loggedInWithin(long nowNanos, long windowNanos) {
    long at = loggedInNanos;
    return at != 0 && nowNanos - at <= windowNanos;
  }

  private void remember(String digest) {
    proofs.put(digest, System.nanoTime());
    if (proofs.size() > PROOFS) {
      Iterator<String> oldest = proofs.keySet().iterator();
      oldest.next();
      oldest.remove();
    }
  }
}
