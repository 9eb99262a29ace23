package dev.omnium.conformance;

import java.sql.Array;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a scenario program uses: application connections from the side under test, and recorders
 * of what the application and the servers saw. Every recorder catches the exception of the call
 * and records its type and SQLState instead, so that failures are compared like values.
 */
public final class Run implements AutoCloseable {
  /** A call whose result (or exception) is recorded. */
  @FunctionalInterface
  public interface Call {
    Object get() throws Exception;
  }

  /** A call without a result. */
  @FunctionalInterface
  public interface Action {
    void run() throws Exception;
  }

  private final Source source;
  private final Server server;
  private final Observation obs = new Observation();
  private final List<Connection> opened = new ArrayList<>();
  /** A session was killed and no call has failed since: see {@link #failed(Exception)}. */
  private boolean lossPending;

  public Run(Source source, Server server) {
    this.source = source;
    this.server = server;
  }

  /** @return what this run saw so far */
  public Observation observation() {
    return obs;
  }

  // ---------------------------------------------------------------- connections

  /** @return a new application connection of the side under test, closed at the end of the run */
  public Connection open() throws SQLException {
    Connection c = source.open();
    opened.add(c);
    return c;
  }

  /** @return {@link #open()} with autocommit off: its next statement begins a transaction */
  public Connection openTransaction() throws SQLException {
    Connection c = open();
    c.setAutoCommit(false);
    return c;
  }

  /**
   * @return {@link #open()} read-only, then with autocommit off (in that order, as a framework's
   *     read-only transaction begins)
   */
  public Connection openReadOnlyTransaction() throws SQLException {
    Connection c = open();
    c.setReadOnly(true);
    c.setAutoCommit(false);
    return c;
  }

  /**
   * A fresh table {@code t} and a transaction that inserted row 1 (recorded as {@code key}).
   *
   * @return the connection, its transaction open
   */
  public Connection transactionWithRowA(String key) throws Exception {
    table("t");
    Connection c = openTransaction();
    u(key, c, "INSERT INTO t VALUES (1, 'a')");
    return c;
  }

  /** Inserts row 2 on {@code c} ({@code b}), commits ({@code commit}) and records t's rows. */
  public void rowBThenCommit(Connection c) throws Exception {
    u("b", c, "INSERT INTO t VALUES (2, 'b')");
    act("commit", c::commit);
    rows("t");
  }

  // ---------------------------------------------------------------- what the application saw

  /** Records a value. */
  public void v(String key, Object value) {
    obs.add(Observation.Kind.APP, key, normalize(render(value)));
  }

  /** Records the result of {@code call}, or its exception. */
  public Object call(String key, Call call) {
    try {
      Object o = call.get();
      v(key, o);
      return o;
    } catch (Exception e) {
      obs.add(Observation.Kind.APP, key, failed(e));
      return null;
    }
  }

  /** Records "ok" when {@code action} completes, or its exception. */
  public boolean act(String key, Action action) {
    try {
      action.run();
      obs.add(Observation.Kind.APP, key, "ok");
      return true;
    } catch (Exception e) {
      obs.add(Observation.Kind.APP, key, failed(e));
      return false;
    }
  }

  /** Runs {@code sql} with a new statement and records every row (or the exception). */
  public void q(String key, Connection c, String sql) {
    call(key, () -> {
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
        return renderRows(rs);
      }
    });
  }

  /** Runs {@code sql} with {@code execute} and records the update count or the rows. */
  public void u(String key, Connection c, String sql) {
    call(key, () -> {
      try (Statement st = c.createStatement()) {
        if (st.execute(sql)) {
          try (ResultSet rs = st.getResultSet()) {
            return render(rs);
          }
        }
        return "count=" + st.getUpdateCount();
      }
    });
  }

  /** Records the getters frameworks read on a connection, each on its own (each may throw). */
  public void state(String key, Connection c) {
    call(key + ".isClosed", c::isClosed);
    call(key + ".isValid", () -> c.isValid(5));
    call(key + ".autoCommit", c::getAutoCommit);
    call(key + ".readOnly", c::isReadOnly);
    call(key + ".isolation", c::getTransactionIsolation);
    call(key + ".holdability", c::getHoldability);
    call(key + ".schema", c::getSchema);
    call(key + ".catalog", c::getCatalog);
  }

  // ---------------------------------------------------------------- what the servers saw

  /** Creates the standard table {@code name (id int PRIMARY KEY, v text)}, empty. */
  public void table(String name) throws Exception {
    setup("DROP TABLE IF EXISTS " + name + " CASCADE",
        "CREATE TABLE " + name + " (id int PRIMARY KEY, v text)");
  }

  /**
   * Records the rows of {@code table} on the primary, as the harness's own connection sees them.
   */
  public void rows(String table) throws Exception {
    obs.add(Observation.Kind.SERVER, "rows " + table, server.rows(table));
  }

  /** Records this side's non-idle sessions and the locks they hold, on every node. */
  public void activity(String key) throws Exception {
    obs.add(Observation.Kind.SERVER, "activity " + key, normalize(server.activity(source.app())));
  }

  /**
   * Records where the next statement on {@code c} runs: node, recovery and application_name,
   * with the connection's read-only flag, the one fact that allows a difference.
   */
  public void where(String key, Connection c) {
    String v;
    try {
      boolean ro = c.isReadOnly();
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
          "SELECT inet_server_port(), pg_is_in_recovery(), current_setting('application_name')")) {
        rs.next();
        v = "ro=" + ro + " node=" + server.node(rs.getInt(1)) + " recovery=" + rs.getBoolean(2)
            + " app=" + normalize(rs.getString(3));
      }
    } catch (Exception e) {
      v = failed(e);
    }
    obs.add(Observation.Kind.WHERE, key, v);
  }

  /** Creates the scenario's tables (as superuser, on the primary) and waits for the replicas. */
  public void setup(String... sql) throws Exception {
    server.setup(Arrays.asList(sql));
  }

  /** Waits until the replicas replayed what the primary committed, so reads see it anywhere. */
  public void sync() throws Exception {
    server.sync();
  }

  /** Ends the session that runs {@code c}'s statements (as a restart or an administrator would). */
  public void kill(Connection c) throws Exception {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_backend_pid(), inet_server_port()")) {
      rs.next();
      server.terminate(rs.getLong(1), rs.getInt(2));
    }
    lossPending = true;
  }

  /**
   * The failure of the first call that runs into a killed session is racy even on pgjdbc alone:
   * the server's FATAL 57P01 when it is read before the socket fails, an I/O error (08006) when a
   * write fails first. Both mean "the session is gone" and are recorded as such, once; every
   * later failure is recorded exactly (pgjdbc: PSQLException 08003).
   */
  private String failed(Exception e) {
    if (lossPending) {
      lossPending = false;
      if (e instanceof SQLException se && se.getSQLState() != null
          && (se.getSQLState().equals("57P01") || se.getSQLState().equals("08006"))) {
        return "!session-lost(57P01|08006)";
      }
    }
    return failure(e);
  }

  /** Records this side's activity once closed sessions had time to end (at most 3 s). */
  public void settled(String key) throws Exception {
    obs.add(Observation.Kind.SERVER, "settled " + key,
        normalize(server.settledActivity(source.app())));
  }

  // ---------------------------------------------------------------- end of the run

  /**
   * Closes every connection the scenario left open (recording failures), then records what is
   * still active on the servers, then ends what the scenario leaked so the next starts clean.
   */
  @Override
  public void close() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      Connection c = opened.get(i);
      act("end.close#" + i, c::close);
    }
    settled("end");
    server.reset(source.app());
  }

  // ---------------------------------------------------------------- rendering

  private String normalize(String s) {
    return s == null ? null : s.replace(source.app(), "$APP");
  }

  /** @return the exception as type and SQLState (messages are the drivers' own wording) */
  static String failure(Throwable e) {
    if (e instanceof SQLException se) {
      return "!" + e.getClass().getSimpleName() + "(" + se.getSQLState() + ")";
    }
    return "!" + e.getClass().getSimpleName();
  }

  static String render(Object o) {
    try {
      if (o == null) {
        return "null";
      }
      if (o instanceof ResultSet rs) {
        return renderRows(rs);
      }
      if (o instanceof byte[] b) {
        StringBuilder s = new StringBuilder("0x");
        for (byte x : b) {
          s.append(String.format("%02x", x));
        }
        return s.toString();
      }
      if (o instanceof int[] a) {
        return Arrays.toString(a);
      }
      if (o instanceof long[] a) {
        return Arrays.toString(a);
      }
      if (o instanceof Object[] a) {
        return Arrays.deepToString(a);
      }
      if (o instanceof Array a) {
        return render(a.getArray());
      }
      if (o instanceof SQLWarning w) {
        StringBuilder s = new StringBuilder();
        int n = 0;
        for (SQLWarning x = w; x != null && n < 20; x = x.getNextWarning(), n++) {
          s.append(n == 0 ? "" : ";").append(x.getSQLState()).append(':').append(x.getMessage());
        }
        return s.toString();
      }
      if (o instanceof Boolean || o instanceof Number || o instanceof CharSequence
          || o.getClass().getName().startsWith("java.")) {
        return String.valueOf(o);
      }
      // a driver object (SQLXML, Blob, ...): its presence, never its identity
      return "object";
    } catch (SQLException e) {
      return failure(e);
    }
  }

  static String renderRows(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    int n = md.getColumnCount();
    StringBuilder s = new StringBuilder();
    int rows = 0;
    while (rs.next()) {
      s.append(rows++ == 0 ? "" : ";");
      for (int i = 1; i <= n; i++) {
        s.append(i == 1 ? "" : "|").append(render(rs.getObject(i)));
      }
    }
    return rows == 0 ? "(no rows)" : s.toString();
  }
}
