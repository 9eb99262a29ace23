package dev.omnium.jdbc;

/**
 * Where a physical connection goes, and so which session settings it gets
 * ({@link OmniumConfig#physicalProperties(Route)}). The router also counts routes by it:
 * keep these five constants, in this order.
 */
enum Route {
  /** Read-write work on the primary. */
  PRIMARY(true),
  /** Read-only transactions on a fresh replica: read-only session, replica timeout. */
  REPLICA(false),
  /** Read-only transactions on the primary when no replica is fresh: read-only session. */
  FALLBACK(false),
  /** The lag watcher's dedicated replica connection. */
  WATCHER(true),
  /** The heartbeat writer's dedicated primary connection. */
  HEARTBEAT(true);

  /**
   * Auto-commit of a session as this route lends it. Read routes lend sessions with it off, the
   * state read-only transactions (the usual read-only work) want: they change nothing on the
   * session, so its pool has nothing to reset; autocommit reads turn it on and the pool turns it
   * off again. pgjdbc sends BEGIN with a transaction's first statement, so no round trip is added.
   */
  final boolean lentAutoCommit;

  Route(boolean lentAutoCommit) {
    this.lentAutoCommit = lentAutoCommit;
  }

  /** A replica's connections (its pool, its watcher): they log in to a standby. */
  boolean replicaSide() {
    return this == REPLICA || this == WATCHER;
  }
}
