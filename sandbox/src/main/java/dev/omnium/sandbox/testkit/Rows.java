package dev.omnium.sandbox.testkit;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** The first row of a query run on an application's own connection, as text. */
public final class Rows {
  private Rows() { }

  /**
   * Runs {@code sql} on {@code c} and returns its first row.
   *
   * @param c the connection (its transaction state is left as it is)
   * @param sql a query returning at least one row
   * @return every column of the first row, as {@code getString} gives it
   * @throws SQLException when the query fails or returns no row
   */
  public static String[] first(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      if (!rs.next()) {
        throw new SQLException("no row: " + sql);
      }
      String[] row = new String[rs.getMetaData().getColumnCount()];
      for (int i = 0; i < row.length; i++) {
        row[i] = rs.getString(i + 1);
      }
      return row;
    }
  }
}
