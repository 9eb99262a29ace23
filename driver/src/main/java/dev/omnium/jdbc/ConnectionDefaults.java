package dev.omnium.jdbc;

import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.postgresql.PGProperty;

/**
 * What pgjdbc's connection properties make of a new connection's JDBC defaults, read as pgjdbc
 * reads them: {@code readOnly} (the connection starts read-only), {@code readOnlyMode} (what
 * read-only means: see {@link ReadOnlyMode}), {@code defaultRowFetchSize} (the fetch size of
 * statements that set none; a negative value fails the connect, 22023, as with pgjdbc), and the
 * {@code prepareThreshold} and {@code adaptiveFetch} a new statement reports. The
 * logical connection keeps these itself; {@code readOnly} never reaches a physical session, whose
 * read-only-ness is its route's.
 */
final class ConnectionDefaults {
  /** What {@code setReadOnly(true)} routes, after pgjdbc's {@code readOnlyMode}. */
  enum ReadOnlyMode {
    /** Every statement of a read-only connection, autocommit included: omnium's default. */
    ALWAYS,
    /** Read-only transactions only: autocommit statements run on the primary, read-write. */
    TRANSACTION,
    /** Nothing: read-only is reported, and all work runs on the primary. */
    IGNORE
  }

  static final String READ_ONLY = PGProperty.READ_ONLY.getName();

  final boolean readOnly;
  final ReadOnlyMode readOnlyMode;
  final int defaultRowFetchSize;
  final int prepareThreshold;
  final boolean adaptiveFetch;

  private ConnectionDefaults(boolean readOnly, ReadOnlyMode readOnlyMode, int defaultRowFetchSize,
      int prepareThreshold, boolean adaptiveFetch) {
    this.readOnly = readOnly;
    this.readOnlyMode = readOnlyMode;
    this.defaultRowFetchSize = defaultRowFetchSize;
    this.prepareThreshold = prepareThreshold;
    this.adaptiveFetch = adaptiveFetch;
  }

  /**
   * @param pgjdbc the pass-through (pgjdbc) properties of a configuration
   * @throws SQLException as pgjdbc's connect: 22023 for a negative or malformed fetch size, a
   *     malformed prepare threshold
   */
  static ConnectionDefaults of(Map<String, String> pgjdbc) throws SQLException {
    Properties p = new Properties();
    pgjdbc.forEach(p::setProperty);
    int fetchSize = PGProperty.DEFAULT_ROW_FETCH_SIZE.getInt(p);
    if (fetchSize < 0) {
      throw PgjdbcErrors.invalidParameter("Fetch size must be a value greater than or equal to 0.");
    }
    return new ConnectionDefaults(PGProperty.READ_ONLY.getBoolean(p),
        readOnlyMode(pgjdbc.get(PGProperty.READ_ONLY_MODE.getName())), fetchSize,
        PGProperty.PREPARE_THRESHOLD.getInt(p), PGProperty.ADAPTIVE_FETCH.getBoolean(p));
  }

  /**
   * Unset: {@link ReadOnlyMode#ALWAYS}, omnium's routing of read-only work. Given, as pgjdbc reads
   * it (case-insensitive, anything else {@code transaction}).
   */
  static ReadOnlyMode readOnlyMode(String value) {
    if (value == null) return ReadOnlyMode.ALWAYS;
    switch (value.toLowerCase(Locale.ROOT)) {
      case "always": return ReadOnlyMode.ALWAYS;
      case "ignore": return ReadOnlyMode.IGNORE;
      default: return ReadOnlyMode.TRANSACTION;
    }
  }
}
