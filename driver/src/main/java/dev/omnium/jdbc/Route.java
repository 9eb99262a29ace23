package dev.omnium.jdbc;

/**
 * Where a physical connection goes, and so which session settings it gets
 * ({@link OmniumConfig#physicalProperties(Route)}). The router also counts routes by it:
 * keep these five constants, in this order.
 */
enum Route {
  /** Read-write work on the primary. */
  PRIMARY,
  /** Read-only transactions on a fresh replica: read-only session, replica timeout. */
  REPLICA,
  /** Read-only transactions on the primary when no replica is fresh: read-only session. */
  FALLBACK,
  /** The lag watcher's dedicated replica connection. */
  WATCHER,
  /** The heartbeat writer's dedicated primary connection. */
  HEARTBEAT
}
