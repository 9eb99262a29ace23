package dev.omnium.conformance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Savepoint;

/**
 * A session lost at each point of a logical connection's life (issue 12 defect 1): every later
 * call fails as pgjdbc's would, isClosed/isValid tell the truth, nothing after the loss commits.
 */
final class LostSessionScenarios {
  private LostSessionScenarios() { }

  /**
   * Session state made with {@code sql} (recorded as {@code key}), the session lost, then
   * {@code read} twice (as {@code readKey} and {@code readKey-again}).
   */
  static Scenario.Program readsAfterLoss(String key, String sql, String readKey, String read) {
    return r -> {
      Connection c = r.open();
      r.u(key, c, sql);
      r.kill(c);
      r.q(readKey, c, read);
      r.q(readKey + "-again", c, read);
    };
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("lost-session")
        .add("in-transaction", r -> {
          Connection c = r.transactionWithRowA("a");
          r.kill(c);
          r.u("b", c, "INSERT INTO t VALUES (2, 'b')");
          r.u("c", c, "INSERT INTO t VALUES (3, 'c')");
          r.act("commit", c::commit);
          r.state("after", c);
          r.rows("t");
        })
        .add("autocommit", r -> {
          r.table("t");
          Connection c = r.open();
          r.u("a", c, "INSERT INTO t VALUES (1, 'a')");
          r.kill(c);
          r.u("b", c, "INSERT INTO t VALUES (2, 'b')");
          r.u("c", c, "INSERT INTO t VALUES (3, 'c')");
          r.state("after", c);
          r.rows("t");
        })
        .add("after-commit", r -> {
          Connection c = r.transactionWithRowA("a");
          c.commit();
          r.kill(c);
          r.rowBThenCommit(c);
        })
        .add("holding-advisory-lock", r -> {
          Connection c = r.open();
          r.q("lock", c, "SELECT pg_advisory_lock(777)");
          r.kill(c);
          r.q("holds", c, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
              + " AND objid = 777 AND pid = pg_backend_pid()");
          r.settled("after");
        })
        .add("with-temp-table", readsAfterLoss("create", "CREATE TEMP TABLE tmp_lost (x int)",
            "read", "SELECT count(*) FROM tmp_lost"))
        .add("with-session-setting", readsAfterLoss("set", "SET work_mem = '11MB'",
            "show", "SHOW work_mem"))
        .add("is-valid-first", r -> {
          Connection c = r.open();
          r.q("first", c, "SELECT 1");
          r.kill(c);
          r.call("valid", () -> c.isValid(5));
          r.call("closed", c::isClosed);
          r.q("after", c, "SELECT 1");
        })
        .add("close-after-loss", r -> {
          Connection c = r.openTransaction();
          r.q("first", c, "SELECT 1");
          r.kill(c);
          r.act("close", c::close);
          r.call("closed", c::isClosed);
        })
        .add("rollback-after-loss", r -> {
          Connection c = r.transactionWithRowA("a");
          r.kill(c);
          r.act("rollback", c::rollback);
          r.rowBThenCommit(c);
        })
        .add("in-savepoint", r -> {
          Connection c = r.transactionWithRowA("a");
          Savepoint sp = c.setSavepoint();
          r.kill(c);
          r.act("rollback-to", () -> c.rollback(sp));
          r.rowBThenCommit(c);
        })
        .add("getters-after-loss", r -> {
          Connection c = r.open();
          r.q("first", c, "SELECT 1");
          r.kill(c);
          r.call("autocommit", c::getAutoCommit);
          r.act("set-autocommit", () -> c.setAutoCommit(false));
          r.q("after", c, "SELECT 1");
          r.state("end", c);
        })
        .add("set-autocommit-after-loss-in-transaction", r -> {
          Connection c = r.transactionWithRowA("a");
          r.kill(c);
          r.act("autocommit", () -> c.setAutoCommit(true));
          r.u("b", c, "INSERT INTO t VALUES (2, 'b')");
          r.rows("t");
        })
        .add("prepared-after-loss", r -> {
          r.table("t");
          Connection c = r.open();
          PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, 'p')");
          ps.setInt(1, 1);
          r.call("first", ps::executeUpdate);
          r.kill(c);
          r.act("set2", () -> ps.setInt(1, 2));
          r.call("second", ps::executeUpdate);
          r.act("set3", () -> ps.setInt(1, 3));
          r.call("third", ps::executeUpdate);
          r.rows("t");
        })
        .add("read-only-transaction", r -> {
          r.setup("DROP TABLE IF EXISTS t CASCADE", "CREATE TABLE t (id int PRIMARY KEY, v text)",
              "INSERT INTO t VALUES (1, 'a')");
          Connection c = r.openReadOnlyTransaction();
          r.q("read", c, "SELECT v FROM t");
          r.kill(c);
          r.q("read-after", c, "SELECT v FROM t");
          r.act("commit", c::commit);
        });
  }
}
