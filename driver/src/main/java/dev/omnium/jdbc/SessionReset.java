package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * What undoes a pooled session's state before it is lent again, in one round trip. {@link
 * #RESET} undoes every setting with certainty: {@code RESET ALL} restores the values of the
 * startup packet (read-only included) but leaves {@code role} and {@code session_authorization}
 * (PostgreSQL's GUC_NO_RESET_ALL settings; the others of that kind are transaction-scoped), which
 * the two statements before it restore. {@link #CHECK} follows a call the driver could not
 * classify: the reset, session advisory locks released, then one query for what no reset undoes
 * (SQL prepared statements, cursors held past their transaction, channels listened to, temporary
 * objects; pg_cursors also lists the protocol's portal of the check itself, never holdable), whose
 * answer closes the session instead of lending it. The check reads only the backend's own lists
 * and, when the session has a temporary schema, the catalog rows in it. Where the settings were
 * set for the session instead of sent in the startup packet (a pooler that pins sessions, {@link
 * SessionPinning}), {@code RESET ALL} goes back to the server's defaults: the same round trip sets
 * them again.
 */
final class SessionReset {
  static final String RESET = "RESET SESSION AUTHORIZATION; RESET ROLE; RESET ALL";

  /** True when something a reset does not undo is left on the session. */
  static final String LEFT = "SELECT EXISTS (SELECT 1 FROM pg_prepared_statements WHERE from_sql)"
      + " OR EXISTS (SELECT 1 FROM pg_cursors WHERE is_holdable)"
      + " OR EXISTS (SELECT 1 FROM pg_listening_channels())"
      + " OR CASE WHEN pg_my_temp_schema() = 0 THEN false"
      + " ELSE EXISTS (SELECT 1 FROM pg_class WHERE relnamespace = pg_my_temp_schema())"
      + " OR EXISTS (SELECT 1 FROM pg_type WHERE typnamespace = pg_my_temp_schema())"
      + " OR EXISTS (SELECT 1 FROM pg_proc WHERE pronamespace = pg_my_temp_schema()) END";

  static final String CHECK = RESET + "; SELECT pg_advisory_unlock_all(); " + LEFT;

  private SessionReset() { }

  /**
   * Resets {@code c} (in autocommit, no transaction open), and checks it when {@code check}.
   *
   * @param perSession the settings the session set when it opened, set again after the reset;
   *     null when its startup packet carried them
   * @return false when the check found state the session must be closed for
   */
  static boolean run(Connection c, boolean check, String perSession) throws SQLException {
    String reset = perSession == null ? RESET : RESET + "; " + perSession;
    try (Statement st = c.createStatement()) {
      boolean rows = st.execute(check ? reset + "; SELECT pg_advisory_unlock_all(); " + LEFT
          : reset);
      if (!check) return true;
      // the results in order: the commands, the unlock's row, then the check's
      int seen = 0;
      while (rows || st.getUpdateCount() != -1) {
        if (rows && ++seen == 2) {
          try (ResultSet rs = st.getResultSet()) {
            return rs.next() && !rs.getBoolean(1);
          }
        }
        rows = st.getMoreResults();
      }
      return false; // no answer: not certain
    }
  }
}
