package dev.omnium.jdbc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The replica endpoints of every open router in this process, by server ({@code host:port} as
 * listed). A server's role is the same for every router that lists it (another applicationName,
 * user or DataSource), so the first replica session of the process that hears a server report
 * itself a primary stops the replica pools of all of them on it, not only its own.
 */
final class ReplicasByHost {
  private static final ConcurrentHashMap<String, Set<ReplicaEndpoint>> ENDPOINTS =
      new ConcurrentHashMap<>();

  private ReplicasByHost() { }

  static void add(ReplicaEndpoint e) {
    ENDPOINTS.computeIfAbsent(e.name, k -> ConcurrentHashMap.newKeySet()).add(e);
  }

  static void remove(ReplicaEndpoint e) {
    ENDPOINTS.computeIfPresent(e.name, (k, set) -> {
      set.remove(e);
      return set.isEmpty() ? null : set;
    });
  }

  /** A session of {@code host} reported in_hot_standby=off. Rare: once per promotion and pool. */
  static void promoted(String host) {
    Set<ReplicaEndpoint> set = ENDPOINTS.get(host);
    if (set == null) return;
    for (ReplicaEndpoint e : set) e.watcher.noticePromoted();
  }
}
