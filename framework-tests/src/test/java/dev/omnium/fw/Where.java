package dev.omnium.fw;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Where a statement ran, as the server that ran it reports it: recovery state, port,
 * {@code application_name} (which carries omnium's route suffix) and backend pid.
 */
public record Where(boolean inRecovery, int port, String applicationName, int pid) {
  /** Select list of the four facts, usable in any framework's native SQL. */
  public static final String COLUMNS = "pg_is_in_recovery() AS in_recovery, inet_server_port() AS port,"
      + " current_setting('application_name') AS app, pg_backend_pid() AS pid";
  public static final String SQL = "SELECT " + COLUMNS;

  public static Where of(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SQL); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return from(rs);
    }
  }

  public static Where from(ResultSet rs) throws SQLException {
    return new Where(rs.getBoolean("in_recovery"), rs.getInt("port"), rs.getString("app"), rs.getInt("pid"));
  }

  /** From a row of the four columns in {@link #COLUMNS} order (JPA native queries return Object[]). */
  public static Where of(Object[] row) {
    return new Where((Boolean) row[0], ((Number) row[1]).intValue(), (String) row[2], ((Number) row[3]).intValue());
  }

  public boolean onPrimaryAs(String app, int primaryPort) {
    return !inRecovery && port == primaryPort && app.equals(applicationName);
  }
}
