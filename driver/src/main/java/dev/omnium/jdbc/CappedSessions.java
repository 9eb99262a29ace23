package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The data source of an internal pool whose sessions count against a process-wide
 * {@link SessionCap}: each connect takes a slot first, waiting at most as long as a borrower of
 * the pool waits.
 */
final class CappedSessions implements DataSource {
  private final PgConnector connector;
  private final SessionCap cap;
  private final long waitNanos;
  private final String setting;
  /** The pool these sessions feed, once it exists: its own idle sessions are not reclaimed. */
  private volatile HikariDataSource pool;

  /** @param setting the key that sizes the cap, for the error when no slot comes */
  CappedSessions(PgConnector connector, SessionCap cap, long waitNanos, String setting) {
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

  SessionCap cap() {
    return cap;
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

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return connector.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    connector.setLogWriter(out);
  }

  @Override public void setLoginTimeout(int seconds) { connector.setLoginTimeout(seconds); }
  /** The connector's: HikariCP's shutdown reads it (see {@link PgConnector#getLoginTimeout()}). */
  @Override public int getLoginTimeout() { return connector.getLoginTimeout(); }
  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return connector.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) return iface.cast(this);
    return connector.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this) || connector.isWrapperFor(iface);
  }
}
