package dev.omnium.jdbc;

import java.sql.SQLException;
import java.sql.Statement;

/**
 * The options a logical statement re-applies to every new physical statement (fetch size, max
 * rows, timeouts, cursor name, ...). Most statements set none: they share {@link #DEFAULTS}
 * (never changed) and a statement takes its own instance at its first setter, so a statement
 * that sets nothing does not carry these fields.
 */
final class StatementSettings {
  static final int UNSET = -1;

  /** Every option unset; shared, never written. */
  static final StatementSettings DEFAULTS = new StatementSettings();

  int fetchSize = UNSET;
  long maxRows = UNSET;
  int queryTimeout = UNSET;
  int fetchDirection = UNSET;
  int maxFieldSize = UNSET;
  Boolean escapeProcessing;
  Boolean poolable;
  boolean closeOnCompletion;
  String cursorName;

  /** This instance when it is a statement's own, else a fresh one to write into. */
  StatementSettings writable() {
    return this == DEFAULTS ? new StatementSettings() : this;
  }

  /** Sets on {@code s} the options that were set. */
  void applyTo(Statement s) throws SQLException {
    if (this == DEFAULTS) return;
    if (fetchSize != UNSET) s.setFetchSize(fetchSize);
    if (maxRows != UNSET) setMaxRowsOn(s, maxRows);
    if (queryTimeout != UNSET) s.setQueryTimeout(queryTimeout);
    if (fetchDirection != UNSET) s.setFetchDirection(fetchDirection);
    if (maxFieldSize != UNSET) s.setMaxFieldSize(maxFieldSize);
    if (escapeProcessing != null) s.setEscapeProcessing(escapeProcessing);
    if (poolable != null) s.setPoolable(poolable);
    if (closeOnCompletion) s.closeOnCompletion();
    if (cursorName != null) s.setCursorName(cursorName);
  }

  /** pgjdbc implements setMaxRows only (setLargeMaxRows throws 0A000). */
  static void setMaxRowsOn(Statement s, long max) throws SQLException {
    if (max <= Integer.MAX_VALUE) {
      s.setMaxRows((int) max);
    } else {
      s.setLargeMaxRows(max);
    }
  }
}
