package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/**
 * The data source a replica pool draws from: the replica's connector, each session wrapped as a
 * {@link ReplicaSession} validated by the replica's lag watcher (see {@link ReplicaSessionBase}).
 */
final class ReplicaSessions extends DelegatingDataSource {
  private final BooleanSupplier serverAnswers;

  ReplicaSessions(DataSource connector, LagWatcher watcher) {
    super(connector);
    this.serverAnswers = () -> watcher.state() == LagWatcher.State.OK
        && watcher.effectiveLagNanos(System.nanoTime()) != Long.MAX_VALUE;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return new ReplicaSession(delegate.getConnection(), serverAnswers);
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return new ReplicaSession(delegate.getConnection(username, password), serverAnswers);
  }
}
