package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * The data source of an internal pool whose sessions count against a process-wide
 * {@link SessionCap}: each connect takes a slot first, waiting at most as long as a borrower of
 * the pool waits.
 */
final class CappedSessions extends DelegatingDataSource {
  private final PgConnector connector;
  private final SessionCap cap;
  private final long waitNanos;
  private final String setting;
  /** The pool these sessions feed, once it exists: its own idle sessions are not reclaimed. */
  private volatile HikariDataSource pool;

  /** @param setting the key that sizes the cap, for the error when no slot comes */
  CappedSessions(PgConnector connector, SessionCap cap, long waitNanos, String setting) {
    super(connector);
    this.connector = connector;
    this.cap = cap;
    this.waitNanos = waitNanos;
    this.setting = setting;
  }

  /** @return {@code pool}, which these sessions feed */
  HikariDataSource feeds(HikariDataSource pool) {
    this.pool = pool;
    return pool;
  }

  @Override
  public Connection getConnection() throws SQLException {
    boolean slot;
    try {
      slot = cap.reserve(pool, waitNanos, connector::isClosing);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLTransientConnectionException("omnium: interrupted waiting for a session slot",
          "08001", e);
    }
    if (!slot && connector.isClosing()) {
      throw new SQLException("omnium: " + connector + " is closed", "08003");
    }
    if (!slot) {
      throw new SQLTransientConnectionException("omnium: all " + cap.size + " sessions (" + setting
          + ", a cap per process for this server, database and user) are open in the pools of"
          + " this process", "08001");
    }
    Connection c = null;
    try {
      c = connector.getConnection();
      cap.opened(c);
      return c;
    } finally {
      if (c == null) cap.cancel();
    }
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return connector.getConnection(username, password);
  }
}
