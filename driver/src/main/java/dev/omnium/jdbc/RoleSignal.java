package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.PGConnection;

/**
 * What a session's server says about its role without a round trip: PostgreSQL 14+ reports
 * {@code in_hot_standby} as a parameter status at login and again with the first answer after a
 * standby is promoted; pgjdbc keeps the last value it received. Never in between: the server
 * reports changed settings only just before ReadyForQuery, so an idle session of a promoted
 * standby hears nothing until its next command (see PromotionNoticeIT).
 */
final class RoleSignal {
  private static final String IN_HOT_STANDBY = "in_hot_standby";

  private RoleSignal() { }

  /**
   * Whether a new session's server is a primary: from in_hot_standby (PostgreSQL 14+, no round
   * trip), else one query, once per physical connection.
   */
  static boolean isPrimary(Connection c) throws SQLException {
    String hotStandby = c.unwrap(PGConnection.class).getParameterStatus(IN_HOT_STANDBY);
    if (hotStandby != null) return "off".equals(hotStandby);
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
        "SELECT pg_is_in_recovery()")) {
      return rs.next() && !rs.getBoolean(1);
    }
  }

  /** True when the server last said it is not a hot standby; false when it is or said nothing. */
  static boolean reportsPrimary(Connection c) {
    try {
      // Hot path (after every answer on a replica session): pgjdbc's own connection skips unwrap.
      PGConnection pg = c instanceof PGConnection p ? p : c.unwrap(PGConnection.class);
      return reportsPrimary(pg);
    } catch (SQLException | RuntimeException e) {
      return false; // closed or not pgjdbc: the watcher's probe decides
    }
  }

  /** Like {@link #reportsPrimary(Connection)} on pgjdbc's session itself; false when null. */
  static boolean reportsPrimary(PGConnection pg) {
    try {
      return pg != null && "off".equals(pg.getParameterStatus(IN_HOT_STANDBY));
    } catch (RuntimeException e) {
      return false;
    }
  }
}
