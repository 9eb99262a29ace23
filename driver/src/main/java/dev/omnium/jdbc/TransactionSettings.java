package dev.omnium.jdbc;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * A route's session settings (timeouts, read-only) sent with the first statement of each
 * transaction, for sessions behind a pooler where the startup packet cannot carry them
 * ({@link StartupSettings}): PgBouncer's transaction pooling runs the next transaction on any of
 * its server sessions, which others share, so nothing may be set for the session, and what must
 * hold is set for the transaction ({@code SET LOCAL}, undone at its end by the server itself).
 *
 * <p>The settings ride in the same execute as the statement that starts the transaction: pgjdbc
 * sends every statement of a multi-statement execute before it waits (and its own {@code BEGIN}
 * with them), so they cost no round trip. Two forms:
 * <ul>
 *   <li>in a transaction block, {@code SET LOCAL} statements: they take no snapshot, so a
 *       {@code SET TRANSACTION ISOLATION LEVEL} may still follow them;</li>
 *   <li>before an autocommit statement, one {@code SELECT set_config(name, value, true), ...}:
 *       the statements of one execute share one implicit transaction, which ends at its Sync,
 *       and {@code set_config} does not warn there as {@code SET LOCAL} would.</li>
 * </ul>
 * The settings' results come first; the statement steps over them, so the application sees what
 * its own SQL returned. A statement whose first result pgjdbc treats specially (generated keys, a
 * callable's OUT values), a batch, or a query with several statements through
 * {@code executeQuery}/{@code executeUpdate} gets the settings in an execute of their own just
 * before it: one round trip more, and in autocommit mode it runs in a transaction of its own
 * (two). Transaction control ({@code BEGIN}, {@code COMMIT}, {@code SET TRANSACTION} ...) runs
 * as it is, and a transaction it opens gets the settings with its next statement, as does
 * {@code DISCARD} (refused in a transaction block, it touches no data). On the primary
 * route, what PostgreSQL refuses in a transaction block ({@code VACUUM}, {@code CREATE INDEX
 * CONCURRENTLY}, ...) and callable statements in autocommit mode (a procedure may commit) run
 * without them: the server's defaults apply there.
 */
final class TransactionSettings {
  /** How a statement that starts a transaction carries the settings. */
  static final int PREFIXED = 0;
  static final int SEPARATE = 1;
  static final int NONE = 2;

  /** {@code SET LOCAL ...; } for each setting: the form inside a transaction block. */
  final String block;
  final int blockResults;
  /**
   * The same without {@code transaction_read_only}, for a transaction pgjdbc begins with
   * {@code BEGIN READ ONLY} (a read route's session, {@link ReadBindings#bind}): one statement
   * fewer.
   */
  final String blockAfterReadOnlyBegin;
  final int blockAfterReadOnlyBeginResults;
  /**
   * {@code SELECT set_config(...), ...; }: the form before an autocommit statement, without the
   * idle-in-transaction timeout (an autocommit statement is never idle in its transaction).
   */
  final String implicit;
  private final boolean readOnly;

  private TransactionSettings(String block, int blockResults, String blockAfterReadOnlyBegin,
      int blockAfterReadOnlyBeginResults, String implicit, boolean readOnly) {
    this.block = block;
    this.blockResults = blockResults;
    this.blockAfterReadOnlyBegin = blockAfterReadOnlyBegin;
    this.blockAfterReadOnlyBeginResults = blockAfterReadOnlyBeginResults;
    this.implicit = implicit;
    this.readOnly = readOnly;
  }

  /**
   * @param settings name to value, as the startup packet's {@code -c} options set them
   *     ({@code default_transaction_*} become the transaction's own {@code transaction_*})
   */
  static TransactionSettings of(Map<String, String> settings) {
    StringBuilder block = new StringBuilder();
    StringBuilder afterReadOnlyBegin = new StringBuilder();
    StringBuilder implicit = new StringBuilder("SELECT ");
    int n = 0;
    int m = 0;
    int k = 0;
    boolean readOnly = false;
    for (Map.Entry<String, String> e : settings.entrySet()) {
      String name = e.getKey().toLowerCase(Locale.ROOT);
      if (name.startsWith("default_transaction_")) {
        name = name.substring("default_".length());
      }
      boolean readOnlySetting = name.equals("transaction_read_only");
      if (readOnlySetting && isOn(e.getValue())) readOnly = true;
      String set = "SET LOCAL " + name + " = " + value(e.getValue()) + "; ";
      block.append(set);
      n++;
      if (!readOnlySetting) {
        afterReadOnlyBegin.append(set);
        m++;
      }
      if (!name.equals("idle_in_transaction_session_timeout")) {
        implicit.append(k++ == 0 ? "" : ", ").append("set_config(").append(literal(name))
            .append(", ").append(literal(e.getValue())).append(", true)");
      }
    }
    return new TransactionSettings(block.toString(), n, afterReadOnlyBegin.toString(), m,
        k == 0 ? "" : implicit.append("; ").toString(), readOnly);
  }

  /** Whether transactions are read-only (the read routes). */
  boolean readOnly() {
    return readOnly;
  }

  private static boolean isOn(String v) {
    String s = v.trim().toLowerCase(Locale.ROOT);
    return s.equals("on") || s.equals("true") || s.equals("1") || s.equals("yes");
  }

  /** A value as SET takes it: each comma-separated element a literal (lists: search_path). */
  static String value(String v) {
    StringBuilder b = new StringBuilder();
    for (String part : v.split(",", -1)) {
      b.append(b.length() == 0 ? "" : ", ").append(literal(part.trim()));
    }
    return b.toString();
  }

  private static String literal(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  // ---------------------------------------------------------------- at a statement

  /**
   * Runs one execute* call of {@code st} on {@code target}, the session of {@code b}, with the
   * settings when it starts a transaction (or runs in one that began without them).
   */
  Object exec(Binding b, LogicalStatement st, Connection target, int op, String sql, int keys,
      int[] indexes, String[] names) throws SQLException {
    Connection session = b.session();
    int tx = PgTransactionState.of(session);
    if (tx == PgTransactionState.FAILED || (tx == PgTransactionState.OPEN && b.settingsSent)) {
      return st.exec(st.physicalFor(target), op, sql, keys, indexes, names);
    }
    boolean autocommit = tx == PgTransactionState.IDLE && session.getAutoCommit();
    // pgjdbc begins this transaction with BEGIN READ ONLY itself (a read route's session)
    boolean readOnlyBegin = tx == PgTransactionState.IDLE && !autocommit
        && PgTransactionState.beginsReadOnly(session);
    b.settingsSent = false;
    // the settings the application set with SQL, which behind a pooler each transaction carries
    SqlSettings user = b.carried;
    if (user != null && user.isEmpty()) user = null;
    switch (carriage(st, op, sql, keys, indexes, names, b.route(), autocommit)) {
      case PREFIXED:
        // SET LOCAL warns outside a transaction block: with the application's settings an
        // autocommit statement runs in a transaction of its own
        if (autocommit && user != null) {
          return inTransactionOfItsOwn(b, st, target, op, sql, keys, indexes, names, user);
        }
        Object r = prefixed(st, target, op, sql, autocommit, readOnlyBegin, user);
        b.settingsSent = !autocommit;
        return r;
      case SEPARATE:
        if (autocommit) {
          return inTransactionOfItsOwn(b, st, target, op, sql, keys, indexes, names, user);
        }
        String settings = readOnlyBegin ? blockAfterReadOnlyBegin : block;
        sendBlock(session, user == null ? settings : user.carriedWith(settings, readOnly));
        b.settingsSent = true;
        return st.exec(st.physicalFor(target), op, sql, keys, indexes, names);
      default:
        return st.exec(st.physicalFor(target), op, sql, keys, indexes, names);
    }
  }

  /** The last prefix and SQL joined, with the text: one object, read and replaced whole. */
  private record Joined(String prefix, String sql, String text) { }

  private static volatile Joined lastJoined = new Joined("", "", "");

  /**
   * {@code prefix + sql}, the same string object while the same two come again (a prepared
   * statement of the same SQL each transaction): no copy, and pgjdbc's statement cache finds it
   * by the hash the string keeps.
   */
  static String join(String prefix, String sql) {
    Joined j = lastJoined;
    if (j.prefix == prefix && j.sql == sql) return j.text;
    j = new Joined(prefix, sql, prefix + sql);
    lastJoined = j;
    return j.text;
  }

  /** PREFIXED, SEPARATE or NONE for one execute. */
  int carriage(LogicalStatement st, int op, String sql, int keys, int[] indexes,
      String[] names, Route route, boolean autocommit) {
    String text = sql != null ? sql : st instanceof LogicalPreparedStatement
        ? ((LogicalPreparedStatement) st).sql : null;
    int kind = text == null ? StatementStart.OTHER : StatementStart.of(text);
    // DISCARD is refused in a transaction block and touches no data: as it is, on every route
    if (kind == StatementStart.TRANSACTION_CONTROL || kind == StatementStart.DISCARD) return NONE;
    // the primary's own: no read-only to keep, and they cannot run in a transaction block (a
    // procedure called in autocommit mode may commit)
    if (route == Route.PRIMARY && (kind == StatementStart.NO_TRANSACTION_BLOCK
        || (autocommit && st instanceof CallableStatement))) {
      return NONE;
    }
    StatementSettings f = st.settings;
    if (op >= LogicalStatement.BATCH || st instanceof CallableStatement
        || keys != LogicalStatement.UNSET || indexes != null || names != null
        || f.autoGeneratedKeys != LogicalStatement.UNSET || f.columnIndexes != null
        || f.columnNames != null || f.closeOnCompletion) {
      return SEPARATE;
    }
    // executeQuery and executeUpdate check that one result came: several statements, one round
    // trip more rather than pgjdbc's check redone here
    if (op != LogicalStatement.EXECUTE && text != null && text.indexOf(';') >= 0) return SEPARATE;
    return PREFIXED;
  }

  /** The settings and the statement in one execute; the settings' results are stepped over. */
  private Object prefixed(LogicalStatement st, Connection target, int op, String sql,
      boolean autocommit, boolean readOnlyBegin, SqlSettings user) throws SQLException {
    String prefix = autocommit ? implicit : readOnlyBegin ? blockAfterReadOnlyBegin : block;
    int results = autocommit ? (implicit.isEmpty() ? 0 : 1)
        : readOnlyBegin ? blockAfterReadOnlyBeginResults : blockResults;
    if (user != null) { // never in autocommit (see exec)
      prefix = user.carriedWith(prefix, readOnly);
      results += user.carriedCount(readOnly);
    }
    if (results == 0) prefix = null; // nothing to set here (a watcher's autocommit probe, say)
    Statement s = st.physicalFor(target, st instanceof PreparedStatement ? prefix : null);
    boolean isResultSet = st.executeWith(s, sql == null || prefix == null ? sql : prefix + sql);
    for (int i = 0; i < results; i++) isResultSet = s.getMoreResults();
    switch (op) {
      case LogicalStatement.QUERY:
        // as pgjdbc's executeQuery: the statement ran, and returned no rows
        if (!isResultSet) {
          throw new PSQLException("No results were returned by the query.", PSQLState.NO_DATA);
        }
        return st.wrap(s.getResultSet());
      case LogicalStatement.EXECUTE:
        st.boolResult = isResultSet;
        return null;
      default:
        // as pgjdbc's executeUpdate: the statement ran, and returned rows
        if (isResultSet) {
          throw new PSQLException("A result was returned when none was expected.",
              PSQLState.TOO_MANY_RESULTS);
        }
        st.longResult = op == LogicalStatement.UPDATE ? s.getUpdateCount()
            : s.getLargeUpdateCount();
        return null;
    }
  }

  /** pgjdbc sends BEGIN with them: the transaction has its settings before the statement. */
  private static void sendBlock(Connection session, String settings) throws SQLException {
    if (settings.isEmpty()) return;
    try (Statement s = session.createStatement()) {
      s.execute(settings);
    }
  }

  /**
   * An autocommit statement that cannot carry the settings in its own execute runs in a
   * transaction of its own, as autocommit would have run it: the settings, the statement, commit.
   */
  private Object inTransactionOfItsOwn(Binding b, LogicalStatement st, Connection target, int op,
      String sql, int keys, int[] indexes, String[] names, SqlSettings user) throws SQLException {
    Connection session = b.session();
    Statement s = st.physicalFor(target);
    // in a transaction pgjdbc would fetch through a cursor, which the commit closes
    int fetchSize = s.getFetchSize();
    if (fetchSize > 0) s.setFetchSize(0);
    session.setAutoCommit(false);
    boolean committed = false;
    try {
      sendBlock(session, user == null ? block : user.carriedWith(block, readOnly));
      Object r = st.exec(s, op, sql, keys, indexes, names);
      session.commit();
      committed = true;
      return r;
    } finally {
      try {
        if (!committed && PgTransactionState.of(session) != PgTransactionState.IDLE) {
          session.rollback();
        }
      } finally {
        session.setAutoCommit(true);
        if (fetchSize > 0 && !s.isClosed()) s.setFetchSize(fetchSize);
      }
    }
  }

  @Override
  public String toString() {
    return "TransactionSettings[" + block.trim() + "]";
  }
}
