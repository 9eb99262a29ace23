package dev.omnium.jdbc;

import java.io.PrintWriter;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A data source an internal pool draws from, over the route's connector: everything but the
 * connects delegates (the login timeout too, which HikariCP's shutdown reads: see
 * {@link PgConnector#getLoginTimeout()}).
 */
abstract class DelegatingDataSource extends DelegatingWrapper<DataSource> implements DataSource {
  DelegatingDataSource(DataSource connector) {
    super(connector);
  }

  @Override
  public final PrintWriter getLogWriter() throws SQLException {
    return delegate.getLogWriter();
  }

  @Override
  public final void setLogWriter(PrintWriter out) throws SQLException {
    delegate.setLogWriter(out);
  }

  @Override
  public final void setLoginTimeout(int seconds) throws SQLException {
    delegate.setLoginTimeout(seconds);
  }

  @Override
  public final int getLoginTimeout() throws SQLException {
    return delegate.getLoginTimeout();
  }

  @Override
  public final Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return delegate.getParentLogger();
  }
}
