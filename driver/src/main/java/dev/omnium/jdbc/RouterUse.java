package dev.omnium.jdbc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which logical connections hold a router, and since when none has: what lets a driver-mode
 * router that nothing uses close itself without ever closing one that a connection still holds.
 */
final class RouterUse {
  private final Set<Object> open = ConcurrentHashMap.newKeySet();
  private volatile long idleSinceNanos = System.nanoTime();
  private boolean retired; // guarded by this

  /** @return false when the router is being closed: the caller must take another router */
  synchronized boolean join(Object connection) {
    if (retired) return false;
    open.add(connection);
    return true;
  }

  /** Idempotent: a second close or an abort after close changes nothing. */
  void leave(Object connection) {
    if (open.remove(connection)) idleSinceNanos = System.nanoTime();
  }

  int open() {
    return open.size();
  }

  /** @return true once, when no connection has held the router for {@code idleNanos} */
  synchronized boolean retireIfIdle(long nowNanos, long idleNanos) {
    if (retired || !open.isEmpty() || nowNanos - idleSinceNanos < idleNanos) return false;
    retired = true;
    return true;
  }
}
