package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;

/**
 * Physical {@link DatabaseMetaData} seen through a logical connection. This class holds what is
 * not plain delegation: {@link #getConnection()} answers the logical connection, honest
 * {@link #unwrap}/{@link #isWrapperFor}, and result sets come back as {@link ResultSetProxy}
 * whose statement belongs to the logical connection. The generated subclass
 * {@link MetaDataProxy} delegates every other method, default methods included.
 */
abstract class MetaDataProxyBase implements DatabaseMetaData {
  final DatabaseMetaData delegate;
  private final Connection logical;

  MetaDataProxyBase(DatabaseMetaData delegate, Connection logical) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.logical = logical;
  }

  /** The physical metadata. */
  final DatabaseMetaData delegate() {
    return delegate;
  }

  /** A metadata result set whose statement is one of the logical connection, as pgjdbc's. */
  final ResultSet wrap(ResultSet rs) throws SQLException {
    if (rs == null) return null;
    Statement owner = logical instanceof OmniumConnection
        ? LogicalStatement.ofMetaData((OmniumConnection) logical, rs.getStatement()) : null;
    return new ResultSetProxy(rs, owner);
  }

  @Override
  public final Connection getConnection() throws SQLException {
    return logical;
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
    return "MetaDataProxy[" + delegate + "]";
  }
}
