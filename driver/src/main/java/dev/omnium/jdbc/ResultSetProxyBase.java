package dev.omnium.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A physical {@link ResultSet} seen through the logical statement that produced it. This class
 * holds what is not plain delegation: {@link #getStatement()} answers the logical {@code owner}
 * so the physical statement never leaks (once the result set is closed it throws 55000, as
 * pgjdbc does), and honest
 * {@link #unwrap}/{@link #isWrapperFor}. The generated subclass {@link ResultSetProxy} delegates
 * every other method, default methods included.
 */
abstract class ResultSetProxyBase extends DelegatingWrapper<ResultSet> implements ResultSet {
  private final Statement owner;

  ResultSetProxyBase(ResultSet delegate, Statement owner) {
    super(delegate);
    this.owner = owner;
  }

  @Override
  public final Statement getStatement() throws SQLException {
    // pgjdbc checks its own closed state first; isClosed() is a field read, no round trip.
    if (delegate().isClosed()) {
      throw PgjdbcErrors.resultSetClosed();
    }
    return owner;
  }
}
