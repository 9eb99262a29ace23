package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.SQLExceptionOverride;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/** Builds the internal HikariCP pools the same way for every route. */
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

  private Pools() { }

  static HikariDataSource create(String poolName, PgConnector connector, int size, int minIdle,
                                 Duration acquireTimeout, Duration maxLifetime) {
    HikariConfig hc = new HikariConfig();
    hc.setPoolName(poolName.replace(':', '_')); // HikariCP's JMX names refuse ':'
    hc.setDataSource(connector);
    hc.setMaximumPoolSize(size);
    hc.setMinimumIdle(Math.min(minIdle, size));
    long timeout = Math.max(250, acquireTimeout.toMillis()); // HikariCP's floor
    hc.setConnectionTimeout(timeout);
    hc.setValidationTimeout(Math.max(250, Math.min(timeout, 2000)));
    hc.setMaxLifetime(Math.max(30_000, maxLifetime.toMillis()));
    // A replica or primary that is down at start-up must not stop the application from starting.
    hc.setInitializationFailTimeout(-1);
    hc.setRegisterMbeans(true);
    hc.setAutoCommit(true);
    hc.setExceptionOverride(EVICT_ONLY_DEAD_SESSIONS);
    return new HikariDataSource(hc);
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
