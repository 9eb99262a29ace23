package dev.omnium.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;

/**
 * A physical {@link ResultSet} seen through the logical statement that produced it. This class
 * holds what is not plain delegation: {@link #getStatement()} answers the logical {@code owner}
 * so the physical statement never leaks, and honest
 * {@link #unwrap}/{@link #isWrapperFor}. The generated subclass {@link ResultSetProxy} delegates
 * every other method, default methods included.
 */
abstract class ResultSetProxyBase implements ResultSet {
  final ResultSet delegate;
  private final Statement owner;

  ResultSetProxyBase(ResultSet delegate, Statement owner) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.owner = owner;
  }

  /** The physical result set. */
  final ResultSet delegate() {
    return delegate;
  }

  @Override
  public final Statement getStatement() throws SQLException {
    return owner;
  }

  @Override
  public final <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    return delegate.unwrap(iface);
  }

  @Override
  public final boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || delegate.isWrapperFor(iface);
  }

  @Override
  public String toString() {
    return "ResultSetProxy[" + delegate + "]";
  }
}
