package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Physical {@link DatabaseMetaData} seen through a logical connection. This class holds what is
 * not plain delegation: {@link #getConnection()} answers the logical connection, honest
 * {@link #unwrap}/{@link #isWrapperFor}, and result sets come back as {@link ResultSetProxy}
 * whose statement belongs to the logical connection. The generated subclass
 * {@link MetaDataProxy} delegates every other method, default methods included.
 */
abstract class MetaDataProxyBase extends DelegatingWrapper<DatabaseMetaData>
    implements DatabaseMetaData {
  private final Connection logical;

  MetaDataProxyBase(DatabaseMetaData delegate, Connection logical) {
    super(delegate);
    this.logical = logical;
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
}
