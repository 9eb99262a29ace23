package dev.omnium.conformance;

import static dev.omnium.conformance.OnConnection.after;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

/** Cursors and fetch size, scrollable and updatable results, holdability. */
final class CursorScenarios {
  private CursorScenarios() { }

  static void ten(Run r) throws Exception {
    r.setup("DROP TABLE IF EXISTS t CASCADE", "CREATE TABLE t (id int PRIMARY KEY, v text)",
        "INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 10) g");
  }

  /** What a scenario does to an open read-only transaction's result before reading the rest. */
  @FunctionalInterface
  interface ResultStep {
    void run(Run r, Connection c, ResultSet rs) throws Exception;
  }

  /**
   * Three rows read in a read-only transaction: {@code step} ends the transaction somehow, then
   * the rest of the result is read ({@code rest}) and the statement closed.
   */
  static Scenario.Program readOnlyResultAfter(ResultStep step) {
    return r -> {
      ten(r);
      Connection c = r.openReadOnlyTransaction();
      Statement st = c.createStatement();
      ResultSet rs = st.executeQuery("SELECT id FROM t ORDER BY id LIMIT 3");
      step.run(r, c, rs);
      r.call("rest", () -> Run.renderRows(rs));
      st.close();
    };
  }

  /** Makes the statement of a scenario. */
  @FunctionalInterface
  interface StatementOf {
    Statement of(Connection c) throws Exception;
  }

  /**
   * The first row of a transaction's result, its commit, then the rest of the result
   * ({@code fetchSize} rows a fetch), then, if asked, one more commit.
   */
  static Scenario.Program rowsAcrossCommit(StatementOf statement, int fetchSize,
      boolean commitAgain) {
    return r -> {
      ten(r);
      Connection c = r.openTransaction();
      Statement st = statement.of(c);
      st.setFetchSize(fetchSize);
      ResultSet rs = st.executeQuery("SELECT id FROM t ORDER BY id");
      r.call("first", () -> rs.next() ? rs.getInt(1) : -1);
      r.act("commit", c::commit);
      r.call("rest", () -> Run.renderRows(rs));
      st.close();
      if (commitAgain) {
        c.commit();
      }
    };
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("cursors")
        .add("fetch-size-in-transaction", r -> {
          ten(r);
          Connection c = r.openTransaction();
          try (Statement st = c.createStatement()) {
            st.setFetchSize(3);
            r.call("fetch-size", st::getFetchSize);
            r.call("rows", () -> Run.renderRows(st.executeQuery("SELECT id FROM t ORDER BY id")));
          }
          c.commit();
        })
        .add("fetch-size-read-only-transaction", r -> {
          ten(r);
          Connection c = r.openReadOnlyTransaction();
          try (Statement st = c.createStatement()) {
            st.setFetchSize(2);
            ResultSet rs = st.executeQuery("SELECT id FROM t ORDER BY id");
            r.call("rs.fetch-size", rs::getFetchSize);
            r.call("rows", () -> Run.renderRows(rs));
          }
          c.commit();
        })
        .add("fetch-size-autocommit", after(CursorScenarios::ten, (r, c) -> {
          try (Statement st = c.createStatement()) {
            st.setFetchSize(2);
            r.call("rows", () -> Run.renderRows(st.executeQuery("SELECT id FROM t ORDER BY id")));
          }
        }))
        .add("cursor-across-commit", rowsAcrossCommit(Connection::createStatement, 2, false))
        .add("scrollable", after(CursorScenarios::ten, (r, c) -> {
          try (Statement st = c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE,
              ResultSet.CONCUR_READ_ONLY);
                  ResultSet rs = st.executeQuery("SELECT id FROM t ORDER BY id")) {
            r.call("type", rs::getType);
            r.call("last", rs::last);
            r.call("row", rs::getRow);
            r.call("absolute", () -> rs.absolute(4) ? rs.getInt(1) : -1);
            r.call("previous", () -> rs.previous() ? rs.getInt(1) : -1);
            r.call("relative", () -> rs.relative(3) ? rs.getInt(1) : -1);
            r.act("before-first", rs::beforeFirst);
            r.call("first-next", () -> rs.next() ? rs.getInt(1) : -1);
          }
        }))
        .add("forward-only-previous", after(CursorScenarios::ten, (r, c) -> {
          try (Statement st = c.createStatement();
              ResultSet rs = st.executeQuery("SELECT id FROM t")) {
            rs.next();
            r.call("previous", rs::previous);
            r.call("absolute", () -> rs.absolute(1));
          }
        }))
        .add("updatable-update-row", after(CursorScenarios::ten, (r, c) -> {
          try (Statement st = c.createStatement(ResultSet.TYPE_FORWARD_ONLY,
              ResultSet.CONCUR_UPDATABLE);
                  ResultSet rs = st.executeQuery("SELECT id, v FROM t WHERE id <= 2")) {
            r.call("concurrency", rs::getConcurrency);
            while (rs.next()) {
              rs.updateString(2, "u" + rs.getInt(1));
              r.act("update-row" + rs.getInt(1), rs::updateRow);
            }
          }
          r.rows("t");
        }))
        .add("updatable-insert-delete", after(CursorScenarios::ten, (r, c) -> {
          try (Statement st = c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE,
              ResultSet.CONCUR_UPDATABLE); ResultSet rs = st.executeQuery("SELECT id, v FROM t")) {
            r.act("insert", () -> {
              rs.moveToInsertRow();
              rs.updateInt(1, 100);
              rs.updateString(2, "new");
              rs.insertRow();
              rs.moveToCurrentRow();
            });
            r.act("delete", () -> {
              rs.absolute(1);
              rs.deleteRow();
            });
          }
          r.rows("t");
        }))
        .add("updatable-in-read-only-transaction", r -> {
          ten(r);
          Connection c = r.openReadOnlyTransaction();
          try (Statement st = c.createStatement(ResultSet.TYPE_FORWARD_ONLY,
              ResultSet.CONCUR_UPDATABLE);
                  ResultSet rs = st.executeQuery("SELECT id, v FROM t WHERE id = 1")) {
            rs.next();
            rs.updateString(2, "ro");
            r.act("update-row", rs::updateRow);
          }
          r.act("rollback", c::rollback);
          r.rows("t");
        })
        .add("holdability-default", r -> {
          Connection c = r.open();
          r.call("connection", c::getHoldability);
          try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
            r.call("statement", st::getResultSetHoldability);
            r.call("result", rs::getHoldability);
          }
          r.call("metadata", () -> c.getMetaData().getResultSetHoldability());
        })
        .add("holdability-set", r -> {
          Connection c = r.open();
          r.act("set", () -> c.setHoldability(ResultSet.HOLD_CURSORS_OVER_COMMIT));
          r.call("get", c::getHoldability);
          try (Statement st = c.createStatement()) {
            r.call("statement", st::getResultSetHoldability);
          }
          r.act("set-bad", () -> c.setHoldability(42));
        })
        .add("hold-cursor-over-commit", rowsAcrossCommit(c -> c.createStatement(
            ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY,
            ResultSet.HOLD_CURSORS_OVER_COMMIT), 3, true))
        .add("read-only-result-after-commit", readOnlyResultAfter((r, c, rs) -> {
          r.call("first", () -> rs.next() ? rs.getInt(1) : -1);
          r.act("commit", c::commit);
          r.call("closed", rs::isClosed);
        }))
        .add("result-after-set-autocommit", readOnlyResultAfter((r, c, rs) ->
            r.act("autocommit", () -> c.setAutoCommit(true))))
        .add("fetch-direction", r -> {
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            r.call("default", st::getFetchDirection);
            r.act("reverse-forward-only", () -> st.setFetchDirection(ResultSet.FETCH_REVERSE));
            r.act("negative-fetch-size", () -> st.setFetchSize(-1));
          }
        });
  }
}
