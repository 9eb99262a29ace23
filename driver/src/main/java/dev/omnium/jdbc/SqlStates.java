package dev.omnium.jdbc;

import java.net.SocketTimeoutException;
import java.security.GeneralSecurityException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTimeoutException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/** Classifies the errors routing cares about. */
final class SqlStates {
  static final String SERIALIZATION_FAILURE = "40001";
  static final String READ_ONLY_TRANSACTION = "25006";
  static final String ACTIVE_TRANSACTION = "25001";
  static final String DATABASE_DROPPED = "57P04";

  private SqlStates() { }

  /** A replica error worth one retry on the fallback route (docs/routing-contract.md, rule 5). */
  static boolean retryableOnReplica(SQLException e) {
    String state = e.getSQLState();
    if (state == null) return false;
    if (state.equals(SERIALIZATION_FAILURE)) return true;
    if (state.equals(DATABASE_DROPPED)) return false;
    return connectionLost(state);
  }

  /** The physical connection cannot be used again: evict it instead of returning it to its pool. */
  static boolean connectionDead(SQLException e) {
    if (isFatal(e)) return true;
    String state = e.getSQLState();
    return state != null && connectionLost(state);
  }

  private static boolean connectionLost(String state) {
    // class 08: connection exceptions; 57P01-03: admin/crash shutdown, cannot connect now.
    return state.startsWith("08")
        || state.equals("57P01") || state.equals("57P02") || state.equals("57P03");
  }

  /** A client-side socket timeout: the server accepted the connection but does not answer. */
  static boolean timedOut(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SocketTimeoutException
          || t instanceof SQLTimeoutException) return true;
    }
    return false;
  }

  /**
   * The error the application sees when a session is lost: always SQLState class 08, whatever the
   * server said (57P01 admin shutdown, 57P02, 57P03, a FATAL recovery conflict), with the original
   * as the cause, so "connection lost" is one test for callers.
   */
  static SQLException asConnectionLost(SQLException e) {
    String state = e.getSQLState();
    if (state == null || state.startsWith("08")) return e;
    // Only a session the server ended: not a refused login (28P01, 3D000), which is no lost
    // connection.
    boolean lost = state.equals("57P01") || state.equals("57P02") || state.equals("57P03")
        || (state.equals(SERIALIZATION_FAILURE) && isFatal(e));
    if (!lost) return e;
    return new SQLNonTransientConnectionException(
        "omnium: the connection was lost (SQLState " + state + "): " + e.getMessage(), "08006", e);
  }

  /**
   * A login the server refused for its credentials (SQLState class 28: a wrong password, an unknown
   * role, a pg_hba.conf {@code reject} or no entry): the set that logged in is no longer proven.
   */
  static boolean credentialsRefused(SQLException e) {
    String state = e.getSQLState();
    return state != null && state.startsWith("28");
  }

  /**
   * A login that fails the same way every time until someone changes the server or the settings
   * (docs/reliability.md, "Fail fast with the real cause"): credentials (class 28), an unknown
   * database (3D000), no CONNECT privilege (42501), a connection the server rejected (08004: no
   * TLS there, no password here), or a server certificate the client does not trust. Not a server
   * that is down, restarting, full or slow: waiting may help there.
   */
  static boolean loginRefused(SQLException e) {
    String state = e.getSQLState();
    if (state == null) return false;
    if (credentialsRefused(e) || state.equals("3D000") || state.equals("42501")
        || state.equals("08004")) {
      return true;
    }
    if (!state.equals("08006")) return false;
    // pgjdbc's TLS errors are 08006, as a broken socket is: a certificate it refused is not
    String message = String.valueOf(e.getMessage());
    if (message.startsWith("The hostname ") && message.contains(" could not be verified")) {
      return true;
    }
    for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
      if (t instanceof GeneralSecurityException) return true;
    }
    return false;
  }

  /**
   * FATAL means the server ended the session (e.g. a recovery conflict while idle in a
   * transaction).
   */
  static boolean isFatal(SQLException e) {
    if (e instanceof PSQLException) {
      ServerErrorMessage m = ((PSQLException) e).getServerErrorMessage();
      if (m != null) {
        String severity = m.getSeverity();
        return "FATAL".equals(severity) || "PANIC".equals(severity);
      }
    }
    return false;
  }
}
