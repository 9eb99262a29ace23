package dev.omnium.jdbc;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A callable statement on the logical connection: named parameters and out-parameter
 * registrations are recorded like positional ones; out values are read from the physical
 * statement that executed.
 */
abstract class LogicalCallableStatement extends LogicalPreparedStatement
    implements CallableStatement {

  LogicalCallableStatement(OmniumConnection conn, String sql, int type, int concurrency,
      int holdability) {
    super(conn, sql, type, concurrency, holdability, UNSET, null, null);
  }

  @Override
  Statement create(Connection target) throws SQLException {
    StatementSettings f = settings;
    return f.holdability == UNSET
        ? target.prepareCall(sql, f.type, f.concurrency)
        : target.prepareCall(sql, f.type, f.concurrency, f.holdability);
  }

  /** The physical statement that executed, for out values. */
  final CallableStatement callable() throws SQLException {
    checkOpen();
    if (physical == null) {
      throw PgjdbcErrors.notInState(
          "Results cannot be retrieved from a CallableStatement before it is executed.");
    }
    return (CallableStatement) physical;
  }
}
