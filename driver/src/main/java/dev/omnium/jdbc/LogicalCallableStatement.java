package dev.omnium.jdbc;

import java.sql.CallableStatement;
import java.sql.SQLException;

/**
 * A callable statement on the logical connection: named parameters and out-parameter
 * registrations are recorded like positional ones; out values are read from the physical
 * statement that executed.
 */
abstract class LogicalCallableStatement extends LogicalPreparedStatement implements CallableStatement {

  LogicalCallableStatement(OmniumConnection conn, String sql, int type, int concurrency, int holdability) {
    super(conn, sql, type, concurrency, holdability, UNSET, null, null, true);
  }

  @Override
  java.sql.Statement create(java.sql.Connection target) throws SQLException {
    return resultSetHoldability == UNSET
        ? target.prepareCall(sql, resultSetType, resultSetConcurrency)
        : target.prepareCall(sql, resultSetType, resultSetConcurrency, resultSetHoldability);
  }

  /** The physical statement that executed, for out values. */
  final CallableStatement callable() throws SQLException {
    checkOpen();
    if (physical == null) {
      throw new SQLException("No function outputs were registered or the statement has not run yet.", "HY000");
    }
    return (CallableStatement) physical;
  }
}
