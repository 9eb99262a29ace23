package dev.omnium.conformance;

import java.io.ByteArrayInputStream;
import java.net.URL;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.JDBCType;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.HashMap;
import org.postgresql.PGStatement;

/**
 * pgjdbc's argument and state checks, one case a line: a call on a connection, statement,
 * prepared or callable statement or result set, open or closed, with the value or error pgjdbc
 * answers, where it answers (at the call, not later), and what follows (the connection's state,
 * the statement's next execute, the rows).
 */
final class ArgumentScenarios {
  private ArgumentScenarios() { }

  /** One call on a JDBC object. */
  @FunctionalInterface
  interface On<T> {
    Object call(T target) throws Exception;
  }

  private static final String INSERT = "INSERT INTO arg (id, v) VALUES (?, ?)";
  private static final String CALL = "{ ? = call upper(?) }";
  private static final String QUERY = "SELECT 1 AS a, NULL::text AS b";

  private static ByteArrayInputStream bytes() {
    return new ByteArrayInputStream(new byte[] {1, 2});
  }

  static Scenarios.Group group() {
    Scenarios.Group g = new Scenarios.Group("arguments");
    conn(g, "unwrap-wrong-class", c -> c.unwrap(String.class));
    conn(g, "is-wrapper-for-string", c -> c.isWrapperFor(String.class));
    conn(g, "is-valid-negative", c -> c.isValid(-1));
    conn(g, "isolation-invalid", c -> run(() -> c.setTransactionIsolation(99)));
    conn(g, "holdability-invalid", c -> run(() -> c.setHoldability(99)));
    conn(g, "network-timeout-negative", c -> run(() -> c.setNetworkTimeout(Runnable::run, -1)));
    conn(g, "statement-type-invalid", c -> c.createStatement(99, ResultSet.CONCUR_READ_ONLY)
        .executeQuery(QUERY));
    conn(g, "prepare-concurrency-invalid", c -> c.prepareStatement(QUERY,
        ResultSet.TYPE_FORWARD_ONLY, 99).executeQuery());
    // refused at the factory, before any execute (issue 32)
    conn(g, "create-statement-type-invalid-at-call",
        c -> c.createStatement(99, ResultSet.CONCUR_READ_ONLY) != null);
    conn(g, "create-statement-concurrency-invalid-at-call",
        c -> c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE, -1) != null);
    conn(g, "create-statement-holdability-invalid-at-call",
        c -> c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY, -1)
            != null);
    conn(g, "prepare-type-invalid-at-call",
        c -> c.prepareStatement(QUERY, -1, ResultSet.CONCUR_READ_ONLY) != null);
    conn(g, "prepare-holdability-invalid-at-call", c -> c.prepareStatement(QUERY,
        ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_UPDATABLE, 7) != null);
    conn(g, "prepare-call-concurrency-invalid-at-call",
        c -> c.prepareCall(CALL, ResultSet.TYPE_FORWARD_ONLY, 99) != null);
    conn(g, "prepare-call-holdability-invalid-at-call", c -> c.prepareCall(CALL,
        ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY, -1) != null);
    conn(g, "prepare-call-escape-unterminated", c -> c.prepareCall("{ ? = call upper(?) ") != null);
    conn(g, "prepare-call-escape-without-call", c -> c.prepareCall("{ ?= upper (?) }") != null);
    conn(g, "prepare-call-escape-misplaced", c -> c.prepareCall("{ = ? call upper(?); }") != null);
    conn(g, "native-sql-escape", c -> c.nativeSQL("SELECT {fn ucase('a')}"));
    conn(g, "commit-in-autocommit", c -> run(c::commit));
    conn(g, "rollback-in-autocommit", c -> run(c::rollback));
    conn(g, "savepoint-in-autocommit", c -> c.setSavepoint("s"));
    conn(g, "array-of-unknown-type", c -> c.createArrayOf("no_such_type", new Object[] {1}));
    conn(g, "array-of-null-elements", c -> c.createArrayOf("int4", null));
    conn(g, "struct", c -> c.createStruct("int4", new Object[] {1}));
    conn(g, "nclob", c -> c.createNClob());
    conn(g, "blob-in-autocommit", c -> c.createBlob());
    conn(g, "type-map", c -> c.getTypeMap());
    conn(g, "type-map-set-empty", c -> run(() -> c.setTypeMap(new HashMap<>())));
    conn(g, "client-info-unknown-key", c -> run(() -> c.setClientInfo("NoSuchKey", "v")));
    conn(g, "client-info-get-unknown", c -> c.getClientInfo("NoSuchKey"));
    conn(g, "catalog-set-other", c -> run(() -> c.setCatalog("other")));
    conn(g, "read-only-in-autocommit", c -> run(() -> c.setReadOnly(true)));
    conn(g, "isolation-serializable", c -> run(() -> c.setTransactionIsolation(
        Connection.TRANSACTION_SERIALIZABLE)));
    conn(g, "abort-then-valid", c -> run(() -> c.abort(Runnable::run)));
    conn(g, "schema-null", c -> run(() -> c.setSchema(null)));
    conn(g, "schema-missing", c -> run(() -> c.setSchema("no_such_schema")));
    conn(g, "catalog-null", c -> run(() -> c.setCatalog(null)));
    conn(g, "holdability-close-at-commit", c -> run(() -> c.setHoldability(
        ResultSet.CLOSE_CURSORS_AT_COMMIT)));
    closedConn(g, "auto-commit", Connection::getAutoCommit);
    closedConn(g, "set-auto-commit", c -> run(() -> c.setAutoCommit(false)));
    closedConn(g, "metadata", c -> c.getMetaData());
    closedConn(g, "create-statement", c -> c.createStatement());
    closedConn(g, "prepare", c -> c.prepareStatement(QUERY));
    closedConn(g, "prepare-call", c -> c.prepareCall(CALL));
    closedConn(g, "warnings", Connection::getWarnings);
    closedConn(g, "clear-warnings", c -> run(c::clearWarnings));
    closedConn(g, "read-only", Connection::isReadOnly);
    closedConn(g, "set-read-only", c -> run(() -> c.setReadOnly(true)));
    closedConn(g, "schema", Connection::getSchema);
    closedConn(g, "set-schema", c -> run(() -> c.setSchema("public")));
    closedConn(g, "isolation", Connection::getTransactionIsolation);
    closedConn(g, "holdability", Connection::getHoldability);
    closedConn(g, "client-info", c -> c.getClientInfo("ApplicationName"));
    closedConn(g, "set-client-info", c -> run(() -> c.setClientInfo("ApplicationName", "x")));
    closedConn(g, "network-timeout", Connection::getNetworkTimeout);
    closedConn(g, "create-array", c -> c.createArrayOf("int4", new Integer[] {1}));
    closedConn(g, "commit", c -> run(c::commit));
    closedConn(g, "rollback", c -> run(c::rollback));
    closedConn(g, "savepoint", c -> c.setSavepoint());
    closedConn(g, "native-sql", c -> c.nativeSQL("SELECT 1"));
    closedConn(g, "type-map", c -> c.getTypeMap());
    closedConn(g, "catalog", Connection::getCatalog);
    closedConn(g, "is-valid", c -> c.isValid(1));
    closedConn(g, "is-valid-negative", c -> c.isValid(-1));
    closedConn(g, "unwrap-wrong-class", c -> c.unwrap(String.class));
    closedConn(g, "set-network-timeout", c -> run(() -> c.setNetworkTimeout(Runnable::run, 1)));
    closedConn(g, "abort", c -> run(() -> c.abort(Runnable::run)));
    closedConn(g, "set-holdability", c -> run(() -> c.setHoldability(
        ResultSet.HOLD_CURSORS_OVER_COMMIT)));
    closedConn(g, "set-isolation", c -> run(() -> c.setTransactionIsolation(
        Connection.TRANSACTION_REPEATABLE_READ)));
    closedConn(g, "set-catalog", c -> run(() -> c.setCatalog("x")));
    closedConn(g, "create-clob", c -> c.createClob());
    st(g, "max-rows-negative", s -> run(() -> s.setMaxRows(-1)));
    st(g, "large-max-rows", s -> run(() -> s.setLargeMaxRows(5)));
    st(g, "large-max-rows-get", Statement::getLargeMaxRows);
    st(g, "query-timeout-negative", s -> run(() -> s.setQueryTimeout(-1)));
    st(g, "fetch-size-negative", s -> run(() -> s.setFetchSize(-1)));
    st(g, "fetch-direction-invalid", s -> run(() -> s.setFetchDirection(99)));
    st(g, "max-field-size-negative", s -> run(() -> s.setMaxFieldSize(-1)));
    st(g, "more-results-invalid-mode", s -> s.getMoreResults(99));
    st(g, "more-results-keep-before-execute", s -> s.getMoreResults(
        Statement.KEEP_CURRENT_RESULT));
    st(g, "result-set-before-execute", Statement::getResultSet);
    st(g, "update-count-before-execute", Statement::getUpdateCount);
    st(g, "large-update-count-before-execute", Statement::getLargeUpdateCount);
    st(g, "generated-keys-before-execute", Statement::getGeneratedKeys);
    st(g, "unwrap-wrong-class", s -> s.unwrap(String.class));
    st(g, "is-wrapper-for-pgstatement", s -> s.isWrapperFor(PGStatement.class));
    st(g, "cursor-name", s -> run(() -> s.setCursorName("c")));
    st(g, "cancel-before-execute", s -> run(s::cancel));
    st(g, "close-on-completion", s -> run(s::closeOnCompletion));
    st(g, "poolable", s -> run(() -> s.setPoolable(false)));
    st(g, "execute-query-of-insert", s -> s.executeQuery("INSERT INTO arg VALUES (1, 'a')"));
    st(g, "execute-update-of-select", s -> s.executeUpdate(QUERY));
    st(g, "execute-keys-invalid", s -> s.execute("INSERT INTO arg VALUES (1, 'a')", 99));
    st(g, "execute-null-sql", s -> s.execute(null));
    st(g, "execute-batch-empty", Statement::executeBatch);
    st(g, "max-rows-then-query", s -> {
      s.setMaxRows(1);
      return s.executeQuery("SELECT generate_series(1, 3)");
    });
    st(g, "batch-with-select", s -> {
      s.addBatch("INSERT INTO arg VALUES (1, 'a')");
      s.addBatch(QUERY);
      return s.executeBatch();
    });
    closedSt(g, "unwrap-wrong-class", s -> s.unwrap(String.class));
    closedSt(g, "is-wrapper-for", s -> s.isWrapperFor(PGStatement.class));
    closedSt(g, "cancel", s -> run(s::cancel));
    closedSt(g, "max-rows", Statement::getMaxRows);
    closedSt(g, "set-max-rows", s -> run(() -> s.setMaxRows(1)));
    closedSt(g, "fetch-size", Statement::getFetchSize);
    closedSt(g, "result-set", Statement::getResultSet);
    closedSt(g, "update-count", Statement::getUpdateCount);
    closedSt(g, "more-results", Statement::getMoreResults);
    closedSt(g, "generated-keys", Statement::getGeneratedKeys);
    closedSt(g, "warnings", Statement::getWarnings);
    closedSt(g, "clear-warnings", s -> run(s::clearWarnings));
    closedSt(g, "add-batch", s -> run(() -> s.addBatch("SELECT 1")));
    closedSt(g, "clear-batch", s -> run(s::clearBatch));
    closedSt(g, "execute-batch", Statement::executeBatch);
    closedSt(g, "connection", s -> s.getConnection() != null);
    closedSt(g, "poolable", Statement::isPoolable);
    closedSt(g, "close-on-completion", Statement::isCloseOnCompletion);
    closedSt(g, "query-timeout", Statement::getQueryTimeout);
    closedSt(g, "result-set-type", Statement::getResultSetType);
    ps(g, "index-zero", p -> run(() -> p.setInt(0, 1)));
    ps(g, "index-too-high", p -> run(() -> p.setInt(3, 1)));
    ps(g, "index-negative", p -> run(() -> p.setString(-1, "a")));
    ps(g, "missing-parameter", p -> run(() -> p.setInt(1, 1)));
    ps(g, "clear-parameters", p -> run(() -> {
      p.setInt(1, 1);
      p.setString(2, "a");
      p.clearParameters();
    }));
    ps(g, "set-object-bad-conversion", p -> run(() -> p.setObject(1, "abc", Types.INTEGER)));
    ps(g, "set-object-sql-type", p -> run(() -> p.setObject(1, 1, JDBCType.INTEGER)));
    ps(g, "set-null-unknown-type", p -> run(() -> p.setNull(1, 12345)));
    ps(g, "set-nstring", p -> run(() -> p.setNString(2, "a")));
    ps(g, "set-url", p -> run(() -> p.setURL(2, new URL("http://example.org/"))));
    ps(g, "set-ascii-stream-long", p -> run(() -> p.setAsciiStream(2, bytes(), 2L)));
    ps(g, "set-blob-object-blob-type", p -> run(() -> p.setObject(2, bytes(), Types.BLOB)));
    ps(g, "set-object-blob-type-null", p -> run(() -> p.setObject(2, null, Types.BLOB)));
    ps(g, "execute-query-with-sql", p -> p.executeQuery(QUERY));
    ps(g, "add-batch-with-sql", p -> run(() -> p.addBatch(QUERY)));
    ps(g, "set-null-other", p -> run(() -> {
      p.setInt(1, 1);
      p.setNull(2, Types.OTHER);
    }));
    ps(g, "clear-parameters-between-batch-rows", p -> clearedBatch(p, true));
    ps(g, "clear-parameters-after-add-batch", p -> clearedBatch(p, false));
    ps(g, "batch-one-row-short", p -> {
      p.setInt(1, 1);
      p.setString(2, "a");
      p.addBatch();
      p.setInt(1, 2);
      p.addBatch();
      return p.executeBatch();
    });
    cs(g, "named-set-blob", p -> run(() -> p.setBlob("x", bytes())));
    cs(g, "named-set-int", p -> run(() -> p.setInt("x", 1)));
    cs(g, "named-get-int", p -> p.getInt("x"));
    cs(g, "named-register", p -> run(() -> p.registerOutParameter("x", Types.VARCHAR)));
    cs(g, "register-sql-type", p -> run(() -> p.registerOutParameter(1, JDBCType.VARCHAR)));
    cs(g, "register-type-name", p -> run(() -> p.registerOutParameter(1, Types.VARCHAR, "t")));
    cs(g, "get-before-execute", p -> p.getString(1));
    cs(g, "get-blob-before-execute", p -> p.getBlob(1));
    cs(g, "was-null-before-execute", CallableStatement::wasNull);
    cs(g, "blob-object-in-autocommit", p -> run(() -> p.setObject(2, bytes(), Types.BLOB)));
    rs(g, "was-null-before-next", ResultSet::wasNull);
    rs(g, "get-before-next", r -> r.getInt(1));
    rs(g, "get-index-out-of-range", r -> r.next() && r.getInt(99) > 0);
    rs(g, "get-unknown-label", r -> r.next() && r.getInt("nope") > 0);
    rs(g, "get-after-last", r -> r.next() && !r.next() && r.getInt(1) > 0);
    rs(g, "absolute-forward-only", r -> r.absolute(1));
    rs(g, "previous-forward-only", ResultSet::previous);
    rs(g, "before-first-forward-only", r -> run(r::beforeFirst));
    rs(g, "fetch-direction-reverse", r -> run(() -> r.setFetchDirection(
        ResultSet.FETCH_REVERSE)));
    rs(g, "fetch-size-negative", r -> run(() -> r.setFetchSize(-1)));
    rs(g, "update-read-only", r -> r.next() && run(() -> r.updateInt(1, 2)) != null);
    rs(g, "get-object-unsupported-class", r -> r.next() && r.getObject(1, Thread.class) != null);
    rs(g, "unwrap-wrong-class", r -> r.unwrap(String.class));
    rs(g, "find-unknown-column", r -> r.findColumn("nope"));
    rs(g, "row-before-next", ResultSet::getRow);
    rs(g, "is-before-first", ResultSet::isBeforeFirst);
    rs(g, "holdability", ResultSet::getHoldability);
    rs(g, "cursor-name", ResultSet::getCursorName);
    rs(g, "null-then-was-null", r -> r.next() && r.getString(2) == null && r.wasNull());
    closedRs(g, "next", ResultSet::next);
    closedRs(g, "get-int", r -> r.getInt(1));
    closedRs(g, "was-null", ResultSet::wasNull);
    closedRs(g, "metadata", r -> r.getMetaData().getColumnCount());
    closedRs(g, "statement", r -> r.getStatement() != null);
    closedRs(g, "warnings", ResultSet::getWarnings);
    closedRs(g, "fetch-size", ResultSet::getFetchSize);
    closedRs(g, "type", ResultSet::getType);
    closedRs(g, "find-column", r -> r.findColumn("a"));
    closedRs(g, "holdability", ResultSet::getHoldability);
    closedRs(g, "close-again", r -> run(r::close));
    closedRs(g, "unwrap-wrong-class", r -> r.unwrap(String.class));
    return g;
  }

  /**
   * A batch row, parameters cleared, and (when {@code between}) a second row with only its
   * first parameter set: pgjdbc sends nothing of the first row for the second.
   */
  private static Object clearedBatch(PreparedStatement p, boolean between) throws SQLException {
    p.setInt(1, 1);
    p.setString(2, "a");
    p.addBatch();
    p.clearParameters();
    if (between) {
      p.setInt(1, 2);
      p.addBatch();
    }
    return p.executeBatch();
  }

  /** An action as a call: "done" when it returns. */
  private static Object run(Run.Action a) throws Exception {
    a.run();
    return "done";
  }

  /**
   * Records the case's call; false when it failed with 0A000: an application HikariCP pool
   * evicts the connection then, and what follows races that eviction, on pgjdbc too.
   */
  private static boolean called(Run r, Run.Call call) {
    boolean[] fatal = {false};
    r.call("call", () -> {
      try {
        return call.get();
      } catch (SQLException e) {
        fatal[0] = "0A000".equals(e.getSQLState());
        throw e;
      }
    });
    return !fatal[0];
  }

  /** The call on a new connection, then the connection's state. */
  private static void conn(Scenarios.Group g, String name, On<Connection> on) {
    g.add("connection-" + name, r -> {
      Connection c = r.open();
      if (!called(r, () -> on.call(c))) return;
      r.state("after", c);
      r.where("then", c);
    });
  }

  private static void closedConn(Scenarios.Group g, String name, On<Connection> on) {
    g.add("closed-connection-" + name, r -> {
      Connection c = r.open();
      c.close();
      if (!called(r, () -> on.call(c))) return;
      r.call("closed", c::isClosed);
    });
  }

  /** The call on a new statement, then what the statement and the table show. */
  private static void st(Scenarios.Group g, String name, On<Statement> on) {
    g.add("statement-" + name, r -> {
      r.table("arg");
      Connection c = r.open();
      try (Statement s = c.createStatement()) {
        if (!called(r, () -> on.call(s))) return;
        r.call("then", () -> Run.renderRows(s.executeQuery("SELECT count(*) FROM arg")));
        r.call("warnings", s::getWarnings);
      }
      r.rows("arg");
    });
  }

  private static void closedSt(Scenarios.Group g, String name, On<Statement> on) {
    g.add("closed-statement-" + name, r -> {
      Connection c = r.open();
      Statement s = c.createStatement();
      s.close();
      if (!called(r, () -> on.call(s))) return;
      r.call("closed", s::isClosed);
      r.q("connection", c, "SELECT 1");
    });
  }

  /** The call on {@link #INSERT} in autocommit, then its execute (parameters as left) and rows. */
  private static void ps(Scenarios.Group g, String name, On<PreparedStatement> on) {
    g.add("prepared-" + name, r -> {
      r.table("arg");
      Connection c = r.open();
      try (PreparedStatement p = c.prepareStatement(INSERT)) {
        if (!called(r, () -> on.call(p))) return;
        r.call("execute", p::executeUpdate);
      }
      r.rows("arg");
    });
  }

  /** The call on {@link #CALL}, then its execute and the out value. */
  private static void cs(Scenarios.Group g, String name, On<CallableStatement> on) {
    g.add("callable-" + name, r -> {
      Connection c = r.open();
      try (CallableStatement p = c.prepareCall(CALL)) {
        if (!called(r, () -> on.call(p))) return;
        r.call("execute", () -> {
          p.registerOutParameter(1, Types.VARCHAR);
          p.setString(2, "a");
          p.execute();
          return p.getString(1);
        });
      }
    });
  }

  /** The call on the open result of {@link #QUERY}, then the rest of its rows. */
  private static void rs(Scenarios.Group g, String name, On<ResultSet> on) {
    g.add("result-" + name, r -> {
      Connection c = r.open();
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(QUERY)) {
        if (!called(r, () -> on.call(rs))) return;
        r.call("rest", () -> Run.renderRows(rs));
      }
    });
  }

  private static void closedRs(Scenarios.Group g, String name, On<ResultSet> on) {
    g.add("closed-result-" + name, r -> {
      Connection c = r.open();
      try (Statement s = c.createStatement()) {
        ResultSet rs = s.executeQuery(QUERY);
        rs.close();
        if (!called(r, () -> on.call(rs))) return;
        r.call("closed", rs::isClosed);
      }
    });
  }
}
