package dev.omnium.jdbc;

import java.util.Map;

/**
 * What a router exposes over JMX as {@code dev.omnium:type=Router,name=<applicationName>}, and
 * what {@link OmniumDataSource#metrics()} returns. Counters are totals since the router started.
 */
public interface RouterMXBean {
  /** @return the configured replicas as {@code host:port} */
  String[] getReplicas();

  /**
   * @return effective lag per replica ({@code host:port}) in milliseconds; -1 means
   *     unknown, which counts as infinite: no reads go there
   */
  Map<String, Long> getEffectiveLagMillis();

  /**
   * @return the watcher state per replica: OK, UNREACHABLE, NO_HEARTBEAT_TABLE,
   *     NOT_IN_RECOVERY, FOREIGN_CLUSTER (a standby of another cluster), DIVERGED_TIMELINE (left
   *     on an abandoned timeline), IDENTITY_UNKNOWN, …
   */
  Map<String, String> getReplicaStates();

  /** @return the largest staleness a read-only transaction accepts by default, in ms */
  long getMaxAgeMillis();

  /** @return statements executed on the primary for read-write work */
  long getPrimaryStatements();

  /**
   * @return read-only units of work (transactions, or autocommit statements) routed to a
   *     replica
   */
  long getReplicaRoutes();

  /** @return read-only units of work routed to the fallback pool on the primary */
  long getFallbackRoutes();

  /**
   * @return reads retried on the fallback pool after a replica recovery conflict (40001) or
   *     a lost replica connection
   */
  long getRetries();

  /**
   * @return times a fresh replica could not hand out a connection within
   *     replicaAcquireTimeout
   */
  long getReplicaAcquireFailures();

  /**
   * @return read-your-writes: replica connections asked for their replay position because
   *     the sample was not enough
   */
  long getWritePositionChecks();

  /**
   * @return pooled sessions reset before they were lent again, one round trip each: the work that
   *     borrowed them changed session state (a JDBC setter, a SQL setting, a call the driver
   *     cannot classify, which the reset also checks)
   */
  long getSessionResets();

  /**
   * @return pooled sessions closed instead of lent again: they held state a reset cannot undo
   *     with certainty ({@code PREPARE}, a {@code WITH HOLD} cursor, a temp table, a session
   *     advisory lock, {@code LISTEN}), or the reset's check found some
   */
  long getSessionsClosedForState();

  /** @return fallback connections lent out right now (never more than fallbackPoolSize) */
  int getFallbackActive();

  /** @return the fallback pool's hard cap */
  int getFallbackPoolSize();

  /** @return true while the lag alert is firing for at least one replica */
  boolean isLagAlert();

  /** @return true while this process holds the heartbeat writer lock */
  boolean isHeartbeatLeader();

  /**
   * Estimated wall-clock offset of each server from this process's clock, in milliseconds
   * (positive: the server's clock is ahead), NTP-style from request and response times; keys
   * {@code primary} and each replica's {@code host:port}, a server without an estimate yet is
   * absent. Reported only: lag is measured with this process's monotonic clock, so skew never
   * changes routing.
   *
   * @return offsets by server
   */
  Map<String, Long> getClockOffsetMillis();
}
