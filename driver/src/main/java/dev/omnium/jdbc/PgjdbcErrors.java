package dev.omnium.jdbc;

import java.sql.ClientInfoStatus;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.HashMap;
import java.util.Map;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

/**
 * The errors pgjdbc throws for the same misuse, made the way pgjdbc makes them: a
 * {@link PSQLException} with pgjdbc's SQLState and, where it says something useful, its message,
 * so an application that catches {@code PSQLException} or tests a state sees no difference.
 */
final class PgjdbcErrors {
  private PgjdbcErrors() { }

  /**
   * What pgjdbc's own connect reports for a login a server refused, for a caller that did not
   * attempt the login itself (a borrow whose pool's connects are refused): the same class,
   * SQLState, message and server error fields, with the refusal as the cause. A new object per
   * caller: an exception is never shared between threads.
   */
  static SQLException refusedLogin(SQLException refusal) {
    SQLException copy;
    ServerErrorMessage server = refusal instanceof PSQLException
        ? ((PSQLException) refusal).getServerErrorMessage() : null;
    if (server != null) {
      // with or without the server's detail, as the original (pgjdbc's logServerErrorDetail)
      copy = new PSQLException(server, server.toString().equals(refusal.getMessage()));
      copy.initCause(refusal);
      return copy;
    }
    String state = refusal.getSQLState();
    for (PSQLState s : PSQLState.values()) {
      if (s.getState().equals(state) && refusal instanceof PSQLException) {
        return new PSQLException(refusal.getMessage(), s, refusal);
      }
    }
    return new SQLException(refusal.getMessage(), state, refusal);
  }

  /** 55000, as pgjdbc's {@code PgStatement.checkClosed()}. */
  static PSQLException statementClosed() {
    return new PSQLException("This statement has been closed.", PSQLState.OBJECT_NOT_IN_STATE);
  }

  /** 55000, as pgjdbc's {@code PgResultSet.checkClosed()}. */
  static PSQLException resultSetClosed() {
    return new PSQLException("This ResultSet is closed.", PSQLState.OBJECT_NOT_IN_STATE);
  }

  /** 08003, as pgjdbc's {@code PgConnection.checkClosed()}; {@code cause} may be null. */
  static PSQLException connectionClosed(String why, Throwable cause) {
    return new PSQLException(why == null ? "This connection has been closed."
        : "This connection has been closed: " + why, PSQLState.CONNECTION_DOES_NOT_EXIST, cause);
  }

  /**
   * 08003 for the calls after a read-only transaction's session was lost, where pgjdbc's
   * connection would be closed; this one is not: its next unit of work binds a new session.
   */
  static PSQLException sessionLost(String message, Throwable cause) {
    return new PSQLException(message, PSQLState.CONNECTION_DOES_NOT_EXIST, cause);
  }

  /** 25001: a transaction property changed while a transaction is open. */
  static PSQLException activeTransaction(String message) {
    return new PSQLException(message, PSQLState.ACTIVE_SQL_TRANSACTION);
  }

  /** 25P01: something that needs a transaction, in autocommit mode. */
  static PSQLException noActiveTransaction(String message) {
    return new PSQLException(message, PSQLState.NO_ACTIVE_SQL_TRANSACTION);
  }

  /** 22023: an argument out of range (negative sizes and timeouts, unknown constants). */
  static PSQLException invalidParameter(String message) {
    return new PSQLException(message, PSQLState.INVALID_PARAMETER_VALUE);
  }

  /** 07006, as pgjdbc's {@code setNull} for a {@code java.sql.Types} value it has no type for. */
  static PSQLException unknownType() {
    return new PSQLException("Unknown Types value.", PSQLState.INVALID_PARAMETER_TYPE);
  }

  /** 55000 for a call the object's state does not allow yet (out values before execute). */
  static PSQLException notInState(String message) {
    return new PSQLException(message, PSQLState.OBJECT_NOT_IN_STATE);
  }

  /** 42809, as pgjdbc's prepared statements refuse the methods that take SQL. */
  static PSQLException wrongObjectType(String message) {
    return new PSQLException(message, PSQLState.WRONG_OBJECT_TYPE);
  }

  /**
   * 0A000, as pgjdbc's {@code Driver.notImplemented}: thrown at the call, before any state
   * check, for the methods pgjdbc 42.7 does not implement, rather than recorded and refused at
   * execution.
   */
  static SQLFeatureNotSupportedException notImplemented(String method) {
    return new SQLFeatureNotSupportedException("Method " + method + " is not yet implemented.",
        PSQLState.NOT_IMPLEMENTED.getState());
  }

  /** pgjdbc's {@code setClientInfo} on a closed connection: no SQLState, the 08003 as cause. */
  static SQLClientInfoException clientInfoOnClosed(Iterable<String> names, SQLException cause) {
    Map<String, ClientInfoStatus> failures = new HashMap<>();
    for (String name : names) {
      failures.put(name, ClientInfoStatus.REASON_UNKNOWN);
    }
    return new SQLClientInfoException("This connection has been closed.", failures, cause);
  }

  /** pgjdbc's {@code abort(null)}: a plain {@link SQLException} without SQLState. */
  static SQLException abortWithoutExecutor() {
    return new SQLException("executor is null");
  }
}
