package dev.omnium.conformance;

import static dev.omnium.conformance.OnConnection.opened;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

/** Multiple results, getMoreResults, closeOnCompletion, identities, limits and timeouts. */
final class ResultScenarios {
  private ResultScenarios() { }

  /** Walks every result of an executed statement, as frameworks do. */
  static String walk(Statement st, boolean first) throws Exception {
    StringBuilder s = new StringBuilder();
    boolean isRs = first;
    for (int i = 0; i < 10; i++) {
      if (isRs) {
        try (ResultSet rs = st.getResultSet()) {
          s.append("rs[").append(Run.renderRows(rs)).append("] ");
        }
      } else {
        int n = st.getUpdateCount();
        if (n == -1) {
          break;
        }
        s.append("count[").append(n).append("] ");
      }
      isRs = st.getMoreResults();
    }
    return s.toString();
  }

  /** What a scenario reads after {@code getMoreResults(current)} moved past the first result. */
  @FunctionalInterface
  interface AfterMore {
    void run(Run r, Statement st, ResultSet first) throws Exception;
  }

  /**
   * Two results ({@code SELECT 1; SELECT 2}): {@code more} is {@code getMoreResults(current)},
   * {@code first-closed} whether the first result survived it, then {@code then}.
   */
  static Scenario.Program moreResults(int current, AfterMore then) {
    return r -> {
      Connection c = r.open();
      try (Statement st = c.createStatement()) {
        st.execute("SELECT 1; SELECT 2");
        ResultSet first = st.getResultSet();
        r.call("more", () -> st.getMoreResults(current));
        r.call("first-closed", first::isClosed);
        then.run(r, st, first);
      }
    };
  }

  /**
   * A result ({@code a1}) stays readable ({@code a-rest}) while another statement runs
   * ({@code b}); read-only, the connection is then made read-write ({@code a-closed}).
   */
  static Scenario.Program resultAfterOtherStatement(boolean readOnly) {
    return r -> {
      Connection c = r.open();
      if (readOnly) {
        c.setReadOnly(true);
      }
      Statement a = c.createStatement();
      ResultSet ra = a.executeQuery("SELECT generate_series(1, 3)");
      r.call("a1", () -> ra.next() ? ra.getInt(1) : -1);
      try (Statement b = c.createStatement()) {
        r.call("b", () -> Run.renderRows(b.executeQuery("SELECT 'b'")));
      }
      r.call("a-rest", () -> Run.renderRows(ra));
      if (readOnly) {
        c.setReadOnly(false);
        r.call("a-closed", ra::isClosed);
      }
      a.close();
    };
  }

  /** Closes what an open result depends on: its connection or its statement. */
  @FunctionalInterface
  interface Closing {
    void close(Connection c, Statement st) throws Exception;
  }

  /** {@code SELECT 1}'s open result after {@code closing}: is it closed, does next() work. */
  static Scenario.Program resultAfter(Closing closing, String closedKey, String nextKey) {
    return opened((r, c) -> {
      Statement st = c.createStatement();
      ResultSet rs = st.executeQuery("SELECT 1");
      closing.close(c, st);
      r.call(closedKey, rs::isClosed);
      r.call(nextKey, rs::next);
    });
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("results")
        .add("multiple-selects", opened((r, c) -> {
          try (Statement st = c.createStatement()) {
            r.call("walk", () -> walk(st, st.execute("SELECT 1; SELECT 2, 3")));
          }
        }))
        .add("update-then-select", r -> {
          r.table("t");
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            r.call("walk", () -> walk(st, st.execute(
                "INSERT INTO t VALUES (1, 'a'); SELECT v FROM t; DELETE FROM t")));
          }
          r.rows("t");
        })
        .add("keep-current-result", moreResults(Statement.KEEP_CURRENT_RESULT, (r, st, first) -> {
          r.call("first-next", first::next);
          r.call("first-value", () -> first.getInt(1));
          r.call("second", () -> Run.renderRows(st.getResultSet()));
        }))
        .add("close-current-result", moreResults(Statement.CLOSE_CURRENT_RESULT, (r, st, first) -> {
          r.call("more-again", st::getMoreResults);
          r.call("count", st::getUpdateCount);
        }))
        .add("update-count-of-select", opened((r, c) -> {
          try (Statement st = c.createStatement()) {
            r.call("execute", () -> st.execute("SELECT 1"));
            r.call("count", st::getUpdateCount);
            r.call("large-count", st::getLargeUpdateCount);
          }
        }))
        .add("close-on-completion", opened((r, c) -> {
          Statement st = c.createStatement();
          r.call("default", st::isCloseOnCompletion);
          st.closeOnCompletion();
          r.call("set", st::isCloseOnCompletion);
          ResultSet rs = st.executeQuery("SELECT 1");
          r.call("open", st::isClosed);
          rs.close();
          r.call("after-rs-close", st::isClosed);
          r.call("execute-after", () -> st.executeQuery("SELECT 2") != null);
        }))
        .add("statement-close-closes-results",
            resultAfter((c, st) -> st.close(), "rs-closed", "rs-next"))
        .add("identities", opened((r, c) -> {
          try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
            r.call("st.connection", () -> st.getConnection() == c);
            r.call("rs.statement", () -> rs.getStatement() == st);
            r.call("rs.statement.connection", () -> rs.getStatement().getConnection() == c);
            r.call("st.resultSet", () -> st.getResultSet() == rs);
          }
          try (PreparedStatement ps = c.prepareStatement("SELECT ?")) {
            ps.setInt(1, 1);
            r.call("ps.connection", () -> ps.getConnection() == c);
            try (ResultSet rs = ps.executeQuery()) {
              r.call("ps.rs.statement", () -> rs.getStatement() == ps);
            }
          }
        }))
        .add("max-rows", opened((r, c) -> {
          try (Statement st = c.createStatement()) {
            st.setMaxRows(3);
            r.call("get", st::getMaxRows);
            r.call("rows", () -> Run.renderRows(st.executeQuery("SELECT generate_series(1, 10)")));
          }
        }))
        .add("query-timeout", opened((r, c) -> {
          try (Statement st = c.createStatement()) {
            st.setQueryTimeout(1);
            r.call("get", st::getQueryTimeout);
            r.call("sleep", () -> st.execute("SELECT pg_sleep(30)"));
            r.call("after", () -> Run.renderRows(st.executeQuery("SELECT 'alive'")));
          }
        }))
        .add("execute-query-without-result", r -> {
          r.table("t");
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            r.call("query", () -> st.executeQuery("INSERT INTO t VALUES (1, 'a')") != null);
          }
          r.rows("t");
        })
        .add("execute-update-with-result", opened((r, c) -> {
          try (Statement st = c.createStatement()) {
            r.call("update", () -> st.executeUpdate("SELECT 1"));
          }
        }))
        .add("result-after-other-statement", resultAfterOtherStatement(false))
        .add("read-only-result-after-other-statement", resultAfterOtherStatement(true));
  }
}
