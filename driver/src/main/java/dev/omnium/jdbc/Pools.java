package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.SQLExceptionOverride;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import javax.sql.DataSource;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * Builds the internal HikariCP pools the same way for every route; they share one housekeeping
 * thread.
 */
final class Pools {
  /**
   * HikariCP evicts on some statement-level states too (0A000, e.g. FOR UPDATE on a standby or a
   * serializable read there) and closes its proxy under us; a logical connection must survive
   * such an error exactly as with plain pgjdbc. Only sessions that are really gone are evicted.
   */
  private static final SQLExceptionOverride EVICT_ONLY_DEAD_SESSIONS = new SQLExceptionOverride() {
    @java.lang.Override
    public SQLExceptionOverride.Override adjudicate(SQLException e) {
      return SqlStates.connectionDead(e)
          ? SQLExceptionOverride.Override.MUST_EVICT : SQLExceptionOverride.Override.DO_NOT_EVICT;
    }
  };

  /** Set by {@link OmniumDriver#setPoolMetricsTrackerFactory}; applied to every pool, once each. */
  private static volatile MetricsTrackerFactory metricsTrackerFactory;
  /** Open pools, so a factory set after they started still reaches them; closed ones are pruned. */
  private static final Set<HikariDataSource> OPEN = ConcurrentHashMap.newKeySet();

  private Pools() { }

  /** Gives HikariCP's metrics tracker factory to every open pool and to every later one. */
  static synchronized void metricsTrackerFactory(MetricsTrackerFactory factory) {
    metricsTrackerFactory = factory;
    OPEN.removeIf(HikariDataSource::isClosed);
    for (HikariDataSource pool : OPEN) {
      // HikariCP accepts a factory once per pool, even on a running one
      if (factory != null && pool.getMetricsTrackerFactory() == null) {
        pool.setMetricsTrackerFactory(PoolWait.metrics(factory));
      }
    }
  }

  /**
   * One housekeeping thread for every internal pool of the process (HikariCP starts one per pool
   * otherwise): idle timeouts, lifetimes and minimum idle sessions are a few quick checks every
   * 30 s each; HikariCP does not shut down an executor it was given. With an OpenTelemetry agent
   * the thread is quiet: HikariCP's keep-alive validations there make no span.
   */
  private static final ScheduledThreadPoolExecutor HOUSEKEEPER = housekeeper();

  private static ScheduledThreadPoolExecutor housekeeper() {
    ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(() -> {
        Tracing.quietThread();
        r.run();
      }, "omnium-pool-housekeeper");
      t.setDaemon(true);
      return t;
    });
    e.setRemoveOnCancelPolicy(true); // a closed session's lifetime task leaves with it
    e.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    return e;
  }

  /** @param route whose sessions the pool lends, as {@link Route#lentAutoCommit} says */
  static HikariDataSource create(String poolName, Route route, DataSource connector, int size,
                                 int minIdle, Duration acquireTimeout, Duration maxLifetime) {
    return create(poolName, route, connector, size, minIdle, acquireTimeout, maxLifetime, null);
  }

  /**
   * @param idleTimeout how long a session beyond {@code minIdle} stays unused before it is closed;
   *     null: HikariCP's default
   */
  static HikariDataSource create(String poolName, Route route, DataSource connector, int size,
      int minIdle, Duration acquireTimeout, Duration maxLifetime, Duration idleTimeout) {
    HikariConfig hc = new HikariConfig();
    hc.setPoolName(poolName.replace(':', '_')); // HikariCP's JMX names refuse ':'
    hc.setDataSource(connector);
    hc.setMaximumPoolSize(size);
    hc.setMinimumIdle(Math.min(minIdle, size));
    long timeout = Math.max(250, acquireTimeout.toMillis()); // HikariCP's floor
    hc.setConnectionTimeout(timeout);
    hc.setValidationTimeout(Math.max(250, Math.min(timeout, 2000)));
    hc.setMaxLifetime(Math.max(30_000, maxLifetime.toMillis()));
    if (idleTimeout != null) hc.setIdleTimeout(Math.max(10_000, idleTimeout.toMillis()));
    hc.setScheduledExecutor(HOUSEKEEPER);
    // A replica or primary that is down at start-up must not stop the application from starting.
    hc.setInitializationFailTimeout(-1);
    hc.setRegisterMbeans(true);
    hc.setAutoCommit(route.lentAutoCommit);
    hc.setExceptionOverride(EVICT_ONLY_DEAD_SESSIONS);
    synchronized (Pools.class) {
      MetricsTrackerFactory factory = metricsTrackerFactory;
      if (factory != null) {
        hc.setMetricsTrackerFactory(PoolWait.metrics(factory));
      }
      HikariDataSource pool = new HikariDataSource(hc);
      OPEN.removeIf(HikariDataSource::isClosed);
      OPEN.add(pool);
      return pool;
    }
  }

  /**
   * HikariCP's timeout as omnium reports it: class 08 always (HikariCP leaves the SQLState null
   * when no attempt has failed yet, e.g. a server that does not answer), saying whether no session
   * could be opened (its cause) or every one is in use ({@code inUse}).
   *
   * @param what the connection asked for, e.g. "fallback connection to the primary"
   */
  static SQLTransientConnectionException timedOut(SQLTransientConnectionException e, String what,
      Duration timeout, String inUse) {
    String state = e.getSQLState() == null ? "08001" : e.getSQLState();
    String within = " within poolTimeout (" + timeout.toMillis() + " ms): ";
    Throwable cause = e.getCause();
    return cause != null // HikariCP could not open one: say why, not that the pool is busy
        ? new SQLTransientConnectionException("omnium: cannot open a " + what + within
            + cause.getMessage(), state, e)
        : new SQLTransientConnectionException("omnium: no " + what + within + inUse, state, e);
  }

  /** Returns a connection to its pool, evicting it first when its session is gone. */
  static void release(HikariDataSource pool, Connection c, boolean dead) {
    try {
      if (dead) {
        pool.evictConnection(c);
      } else {
        c.close();
      }
    } catch (SQLException | RuntimeException ignored) {
      // HikariCP discards a connection whose reset fails
    }
  }
}
