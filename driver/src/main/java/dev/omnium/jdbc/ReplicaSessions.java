package dev.omnium.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The data source a replica pool draws from: the replica's connector, each session wrapped as a
 * {@link ReplicaSession} validated by the replica's lag watcher (see {@link ReplicaSessionBase}).
 */
final class ReplicaSessions implements DataSource {
  private final DataSource connector;
  private final BooleanSupplier serverAnswers;
  /** What each transaction sets behind a pooler, known once the connector has connected. */
  private final Supplier<TransactionSettings> perTransaction;

  ReplicaSessions(DataSource connector, LagWatcher watcher) {
    this(connector, watcher, () -> null);
  }

  ReplicaSessions(DataSource connector, LagWatcher watcher,
      Supplier<TransactionSettings> perTransaction) {
    this.connector = connector;
    this.perTransaction = perTransaction;
    this.serverAnswers = () -> watcher.state() == LagWatcher.State.OK
        && watcher.effectiveLagNanos(System.nanoTime()) != Long.MAX_VALUE;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return withSettings(new ReplicaSession(connector.getConnection(), serverAnswers));
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return withSettings(new ReplicaSession(connector.getConnection(username, password),
        serverAnswers));
  }

  private ReplicaSession withSettings(ReplicaSession s) {
    s.perTransaction = perTransaction.get(); // before the pool hands it to another thread
    return s;
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return connector.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    connector.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    connector.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return connector.getLoginTimeout();
  }

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
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || connector.isWrapperFor(iface);
  }
}
