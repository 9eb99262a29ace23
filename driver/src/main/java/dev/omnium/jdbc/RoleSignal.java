package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.PGConnection;

/**
 * What a session's server says about its role without a round trip: PostgreSQL 14+ reports
 * {@code in_hot_standby} as a parameter status at login and again with the first answer after a
 * standby is promoted; pgjdbc keeps the last value it received.
 */
final class RoleSignal {
  private static final String IN_HOT_STANDBY = "in_hot_standby";

  private RoleSignal() { }

  /** True when the session's server last said it is not a hot standby; false when it is or is silent. */
  static boolean reportsPrimary(Connection c) {
    try {
      PGConnection pg = c.unwrap(PGConnection.class);
      return "off".equals(pg.getParameterStatus(IN_HOT_STANDBY));
    } catch (SQLException | RuntimeException e) {
      return false; // closed or not pgjdbc: the watcher's probe decides
    }
  }
}
