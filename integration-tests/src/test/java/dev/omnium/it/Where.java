package dev.omnium.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Where a statement ran, as the server that ran it reports it. */
record Where(boolean inRecovery, int port, String applicationName, int pid, boolean readOnlyDefault) {
  static final String SQL = "SELECT pg_is_in_recovery(), inet_server_port(), current_setting('application_name'),"
      + " pg_backend_pid(), current_setting('default_transaction_read_only') = 'on'";

  static Where of(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SQL); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return from(rs);
    }
  }

  static Where from(ResultSet rs) throws SQLException {
    return new Where(rs.getBoolean(1), rs.getInt(2), rs.getString(3), rs.getInt(4), rs.getBoolean(5));
  }
}
