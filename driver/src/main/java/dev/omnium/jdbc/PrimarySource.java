package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;

/**
 * Where a logical connection gets its primary connection: opened directly, 1:1, in driver mode
 * (the application's own pool sizes the primary), or from the internal pool in DataSource mode.
 */
abstract class PrimarySource implements AutoCloseable {
  abstract Connection open() throws SQLException;

  abstract void release(Connection c, boolean dead);

  /** Sessions go back to a pool and are lent again: they must be reset on return. */
  boolean isPooled() {
    return false;
  }

  @Override
  public abstract void close();

  /** A new primary is known: an internal pool stops sleeping off the old one's refusals. */
  void wake() { }

  static PrimarySource direct(PgConnector connector) {
    return new PrimarySource() {
      @Override Connection open() throws SQLException { return connector.connect(); }

      @Override
      void release(Connection c, boolean dead) {
        try {
          c.close(); // pgjdbc rolls back an open transaction when the session ends
        } catch (SQLException | RuntimeException ignored) {
          // the session is gone either way
        }
      }

      @Override public void close() { }
    };
  }

  /**
   * @param connector the pool's, whose refused logins end a wait for a new session at once
   * @param inUse what a timeout says when every pooled session is in use
   */
  static PrimarySource pooled(HikariDataSource pool, PoolWait.Refusals connector, Duration timeout,
      String inUse) {
    return new PrimarySource() {
      @Override
      Connection open() throws SQLException {
        try {
          return PoolWait.borrow(pool, connector, timeout);
        } catch (SQLTransientConnectionException e) {
          throw Pools.timedOut(e, "connection to the primary", timeout, inUse);
        }
      }

      @Override void release(Connection c, boolean dead) { Pools.release(pool, c, dead); }

      @Override boolean isPooled() { return true; }
      @Override void wake() { PoolWakeUp.wake(pool); }

      @Override public void close() { pool.close(); }
    };
  }
}
