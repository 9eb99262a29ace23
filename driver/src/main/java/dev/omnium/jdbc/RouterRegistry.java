package dev.omnium.jdbc;

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
   * A new logical connection on the shared router of {@code config}, whose credentials become
   * those of the router's new physical connections. Opens nothing.
   */
  static OmniumConnection connect(OmniumConfig config) {
    while (true) {
      Router r = get(config);
      r.credentials.use(config);
      OmniumConnection c = new OmniumConnection(r, r.primary(), config.maxAge().toNanos(), false);
      if (r.use.join(c)) {
        ensureReaper();
        return c;
      }
      ROUTERS.remove(config.routerKey(), r); // being closed as idle right now: take a new one
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
