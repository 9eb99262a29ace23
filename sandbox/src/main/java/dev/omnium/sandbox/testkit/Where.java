package dev.omnium.sandbox.testkit;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Where a statement ran, as the server that ran it reports it: recovery state, port,
 * {@code application_name} (which carries omnium's route suffix), backend pid and
 * {@code default_transaction_read_only}.
 *
 * @param inRecovery {@code pg_is_in_recovery()}: true on a replica
 * @param port {@code inet_server_port()}
 * @param applicationName {@code current_setting('application_name')}
 * @param pid {@code pg_backend_pid()}
 * @param readOnlyDefault {@code default_transaction_read_only} is on
 */
public record Where(boolean inRecovery, int port, String applicationName, int pid,
    boolean readOnlyDefault) {

  /** Select list of the five facts (labels in_recovery, port, app, pid, read_only_default). */
  public static final String COLUMNS = "pg_is_in_recovery() AS in_recovery,"
      + " inet_server_port() AS port, current_setting('application_name') AS app,"
      + " pg_backend_pid() AS pid,"
      + " current_setting('default_transaction_read_only') = 'on' AS read_only_default";

  /** The query that reads the five facts, usable in any framework's native SQL. */
  public static final String SQL = "SELECT " + COLUMNS;

  /**
   * Runs {@link #SQL} on a connection.
   *
   * @param c the connection (its transaction state is left as it is)
   * @return where it ran
   * @throws SQLException when the query fails
   */
  public static Where of(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SQL); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return from(rs);
    }
  }

  /**
   * Reads the current row of a result set that selected {@link #COLUMNS}.
   *
   * @param rs positioned on a row
   * @return where that row was produced
   * @throws SQLException when a column is missing
   */
  public static Where from(ResultSet rs) throws SQLException {
    return new Where(rs.getBoolean("in_recovery"), rs.getInt("port"), rs.getString("app"),
        rs.getInt("pid"), rs.getBoolean("read_only_default"));
  }

  /**
   * From a row of {@link #COLUMNS} in order (JPA native queries return {@code Object[]}).
   *
   * @param row the five values
   * @return where that row was produced
   */
  public static Where of(Object[] row) {
    return new Where((Boolean) row[0], ((Number) row[1]).intValue(), (String) row[2],
        ((Number) row[3]).intValue(), (Boolean) row[4]);
  }

  /**
   * @param app the application name without a route suffix
   * @param primaryPort the primary's port
   * @return true when this ran on the primary, on the read-write route of {@code app}
   */
  public boolean onPrimaryAs(String app, int primaryPort) {
    return !inRecovery && port == primaryPort && app.equals(applicationName);
  }
}
