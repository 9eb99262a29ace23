package dev.omnium.ops;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** Small SQL helpers: quoting, one-value queries, SQLStates. */
final class Sql {
  /** lock_not_available: a lock_timeout (or NOWAIT) fired. */
  static final String LOCK_NOT_AVAILABLE = "55P03";
  /** query_canceled: a statement timeout or a client-side cancel. */
  static final String QUERY_CANCELED = "57014";

  private Sql() {
  }

  /** A quoted identifier: {@code "name"}, inner quotes doubled. */
  static String ident(String name) {
    return '"' + name.replace("\"", "\"\"") + '"';
  }

  /** A quoted {@code "schema"."name"}. */
  static String qualified(String schema, String name) {
    return ident(schema) + "." + ident(name);
  }

  /** A string literal: {@code 'text'}, inner quotes doubled. */
  static String literal(String text) {
    return "'" + text.replace("'", "''") + "'";
  }

  static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /** The first column of the first row, or null. */
  static String one(Connection c, String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** True when {@code e} or one of its causes is an SQLException with {@code state}. */
  static boolean hasState(Throwable e, String state) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException) {
        for (SQLException s = (SQLException) t; s != null; s = s.getNextException()) {
          if (state.equals(s.getSQLState())) {
            return true;
          }
        }
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /** One line, with the SQLState: what a log row or a report line shows of an error. */
  static String message(Throwable e) {
    String m = e.getMessage();
    if (m == null || m.isBlank()) {
      m = e.getClass().getSimpleName();
    }
    m = m.replaceAll("\\s+", " ").trim();
    if (e instanceof SQLException) {
      String state = ((SQLException) e).getSQLState();
      if (state != null && !m.contains(state)) {
        m += " (SQLState " + state + ")";
      }
    }
    return m;
  }
}
