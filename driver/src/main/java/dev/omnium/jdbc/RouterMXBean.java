package dev.omnium.jdbc;

import java.util.Map;

/**
 * What a router exposes over JMX as {@code dev.omnium:type=Router,name=<applicationName>}.
 * Counters are totals since the router started.
 */
public interface RouterMXBean {
  /** Configured replicas as {@code host:port}. */
  String[] getReplicas();

  /** Effective lag per replica in milliseconds; -1 means unknown (treated as infinite: no reads go there). */
  Map<String, Long> getEffectiveLagMillis();

  /** Watcher state per replica: OK, UNREACHABLE, NO_HEARTBEAT_TABLE, NOT_IN_RECOVERY, … */
  Map<String, String> getReplicaStates();

  /** Largest staleness a read-only transaction accepts by default, in milliseconds. */
  long getMaxAgeMillis();

  /** Statements executed on the primary for read-write work. */
  long getPrimaryStatements();

  /** Read-only units of work (transactions, or autocommit statements) routed to a replica. */
  long getReplicaRoutes();

  /** Read-only units of work routed to the fallback pool on the primary. */
  long getFallbackRoutes();

  /** Reads retried on the fallback pool after a replica recovery conflict (40001) or a lost replica connection. */
  long getRetries();

  /** Times a fresh replica could not hand out a connection within replicaAcquireTimeout. */
  long getReplicaAcquireFailures();

  /** Read-your-writes: replica connections asked for their replay position because the sample was not enough. */
  long getWritePositionChecks();

  /** Fallback connections lent out right now (never more than fallbackPoolSize). */
  int getFallbackActive();

  /** The fallback pool's hard cap. */
  int getFallbackPoolSize();

  /** True while the lag alert is firing for at least one replica. */
  boolean isLagAlert();

  /** True while this process holds the heartbeat writer lock. */
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
