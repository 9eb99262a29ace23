package dev.omnium.jdbc;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Driver mode: one router per distinct configuration in the JVM, so every logical connection the
 * application's pool opens shares the replica pools, the fallback cap and the lag watchers.
 */
final class RouterRegistry {
  private static final ConcurrentHashMap<Object, Router> ROUTERS = new ConcurrentHashMap<>();

  private RouterRegistry() { }

  static Router get(OmniumConfig config) {
    Router r = ROUTERS.get(config.routerKey());
    if (r != null && !r.isClosed()) return r;
    return ROUTERS.compute(config.routerKey(),
        (key, existing) -> existing != null && !existing.isClosed() ? existing : new Router(config, false));
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
