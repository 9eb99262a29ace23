package dev.omnium.jdbc;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Driver mode: one router per distinct configuration in the JVM, so every logical connection the
 * application's pool opens shares the replica pools, the fallback cap and the lag watchers.
 */
final class RouterRegistry {
  private static final ConcurrentHashMap<Object, Router> ROUTERS = new ConcurrentHashMap<>();
  private static final List<LagAlertListener> LISTENERS = new CopyOnWriteArrayList<>();

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
  }
}
