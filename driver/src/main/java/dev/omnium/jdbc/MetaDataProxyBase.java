package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Physical {@link DatabaseMetaData} seen through a logical connection. This class holds what is
 * not plain delegation: {@link #getConnection()} answers the logical connection, honest
 * {@link #unwrap}/{@link #isWrapperFor}, and result sets come back as {@link ResultSetProxy} with
 * a null statement (metadata result sets have none of ours). The generated subclass
 * {@link MetaDataProxy} delegates every other method, default methods included.
 */
abstract class MetaDataProxyBase extends DelegatingWrapper<DatabaseMetaData>
    implements DatabaseMetaData {
  private final Connection logical;

  MetaDataProxyBase(DatabaseMetaData delegate, Connection logical) {
    super(delegate);
    this.logical = logical;
  }

  static ResultSet wrap(ResultSet rs) {
    return rs == null ? null : new ResultSetProxy(rs, null);
  }

  @Override
  public final Connection getConnection() throws SQLException {
    return logical;
  }
}
