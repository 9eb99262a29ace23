package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;

/**
 * Physical {@link DatabaseMetaData} seen through a logical connection. This class holds what is
 * not plain delegation: {@link #getConnection()} answers the logical connection, honest
 * {@link #unwrap}/{@link #isWrapperFor}, and result sets come back as {@link ResultSetProxy} with
 * a null statement (metadata result sets have none of ours). The generated subclass
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

  static ResultSet wrap(ResultSet rs) {
    return rs == null ? null : new ResultSetProxy(rs, null);
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
