package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Driver mode: one router per primary database and user and settings in the JVM, so every logical
 * connection the application's pool opens shares the replica pools, the fallback cap and the lag
 * watchers. Credentials and {@code maxAge} are not part of the key (see
 * {@link OmniumConfig#routerKey()}): a rotated password reaches the router's new physical
 * connections, and each logical connection keeps its own {@code maxAge}. A router that no logical
 * connection has held for {@code routerIdleTimeout} is closed by one daemon thread, which itself
 * ends when no router is left.
 */
final class RouterRegistry {
  private static final Logger log = LoggerFactory.getLogger(RouterRegistry.class);
  private static final ConcurrentHashMap<Object, Router> ROUTERS = new ConcurrentHashMap<>();
  private static final List<LagAlertListener> LISTENERS = new CopyOnWriteArrayList<>();
  private static final long MIN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long MAX_CHECK_NANOS = TimeUnit.SECONDS.toNanos(30);
  private static Thread reaper; // guarded by RouterRegistry.class

  private RouterRegistry() { }

  static Router get(OmniumConfig config) {
    Router r = ROUTERS.get(config.routerKey());
    if (r != null && !r.isClosed()) return r;
    return ROUTERS.compute(config.routerKey(),
        (key, existing) -> {
          if (existing != null && !existing.isClosed()) return existing;
          Router created = new Router(config, false);
          created.listeners.addAll(LISTENERS);
          return created;
        });
  }

  /**
   * A new logical connection on the shared router of {@code config}, handed out only once its
   * credentials are proven, as pgjdbc's {@code connect} hands out a connection only after its
   * login (routing contract, rule 12). A credential set the router proved within
   * {@code maxLifetime} opens nothing. Otherwise the connection's own primary session logs in now
   * (before any router starts for it) and stays bound to it, so the proof costs no login of its
   * own; a refused login throws pgjdbc's exception as it is and changes nothing for anyone else.
   * A proven set that is not the router's becomes the router's: its new sessions use it.
   *
   * @throws SQLException what pgjdbc's connect throws for the same settings (28P01, 3D000, 28000,
   *     08006 for TLS, 08001 for an unreachable server…)
   */
  static OmniumConnection connect(OmniumConfig config) throws SQLException {
    Router r = ROUTERS.get(config.routerKey());
    if (r != null && !r.isClosed()) {
      String digest = r.credentials.digest(config);
      if (r.credentials.isProven(digest)) {
        OmniumConnection c = join(r, config, digest, null);
        if (c != null) return c;
      }
    }
    Connection proving = Router.primaryLogin(config).connect();
    boolean handedOver = false;
    try {
      while (true) {
        r = get(config);
        String digest = r.credentials.digest(config);
        r.credentials.proven(config, digest);
        OmniumConnection c = join(r, config, digest, proving);
        if (c != null) {
          handedOver = true;
          return c;
        }
        ROUTERS.remove(config.routerKey(), r); // being closed as idle right now: take a new one
      }
    } finally {
      if (!handedOver) closeQuietly(proving);
    }
  }

  /**
   * A logical connection of {@code config} on {@code r}; null when {@code r} is being closed. With
   * {@code proving}, that session is bound as the connection's primary session before it returns.
   */
  private static OmniumConnection join(Router r, OmniumConfig config, String digest,
      Connection proving) throws SQLException {
    OmniumConnection c = new OmniumConnection(r, r.primaryFor(config, digest, proving),
        config.maxAge().toNanos(), false);
    if (!r.use.join(c)) return null;
    ensureReaper();
    if (proving != null) {
      try {
        c.currentOrPrimary(); // binds the proving session, which the connection's source holds
      } catch (SQLException | RuntimeException e) {
        c.close();
        throw e;
      }
    }
    return c;
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // the login's session is gone either way
    }
  }

  /** Driver mode: listeners for every router, existing and future. */
  static void addListener(LagAlertListener listener) {
    LISTENERS.add(listener);
    for (Router r : ROUTERS.values()) r.listeners.add(listener);
  }

  static void removeListener(LagAlertListener listener) {
    LISTENERS.remove(listener);
    for (Router r : ROUTERS.values()) r.listeners.remove(listener);
  }

  static int size() {
    return ROUTERS.size();
  }

  static void closeAll() {
    for (Object key : ROUTERS.keySet()) {
      Router r = ROUTERS.remove(key);
      if (r != null) r.close();
    }
    Thread t;
    synchronized (RouterRegistry.class) {
      t = reaper;
    }
    if (t != null) LockSupport.unpark(t); // it sees no router left and ends
  }

  private static synchronized void ensureReaper() {
    if (reaper != null) return;
    reaper = new Thread(RouterRegistry::reap, "omnium-router-reaper");
    reaper.setDaemon(true);
    reaper.start();
  }

  private static void reap() {
    while (true) {
      long now = System.nanoTime();
      long wait = MAX_CHECK_NANOS;
      for (Map.Entry<Object, Router> e : ROUTERS.entrySet()) {
        Router r = e.getValue();
        long idle = r.config.routerIdleTimeout().toNanos();
        wait = Math.min(wait, Math.max(MIN_CHECK_NANOS, idle / 4));
        if (r.use.retireIfIdle(now, idle)) {
          ROUTERS.remove(e.getKey(), r);
          log.info("omnium: closing router {}: no connection used it for {} (routerIdleTimeout)", r,
              Durations.format(r.config.routerIdleTimeout()));
          try {
            r.close();
          } catch (RuntimeException ex) {
            log.warn("omnium: closing idle router {} failed: {}", r, ex.toString());
          }
        }
      }
      synchronized (RouterRegistry.class) {
        if (ROUTERS.isEmpty()) {
          reaper = null;
          return;
        }
      }
      LockSupport.parkNanos(RouterRegistry.class, wait);
    }
  }
}
