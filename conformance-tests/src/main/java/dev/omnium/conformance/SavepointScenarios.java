package dev.omnium.conformance;

import java.sql.Connection;
import java.sql.Savepoint;

/** Savepoints, as pgjdbc's SavepointTest exercises them. */
final class SavepointScenarios {
  private SavepointScenarios() { }

  static Scenarios.Group group() {
    return new Scenarios.Group("savepoints")
        .add("rollback-to-savepoint", r -> {
          Connection c = r.transactionWithRowA("a");
          Savepoint sp = c.setSavepoint();
          r.u("b", c, "INSERT INTO t VALUES (2, 'b')");
          r.act("rollback-to", () -> c.rollback(sp));
          r.act("commit", c::commit);
          r.rows("t");
        })
        .add("named-savepoint", r -> {
          Connection c = r.openTransaction();
          Savepoint sp = c.setSavepoint("sp1");
          r.call("name", sp::getSavepointName);
          r.call("id", sp::getSavepointId);
          c.rollback();
        })
        .add("unnamed-savepoint", r -> {
          Connection c = r.openTransaction();
          Savepoint sp = c.setSavepoint();
          Savepoint sp2 = c.setSavepoint();
          // ids are per physical session in pgjdbc: only their validity and uniqueness matter
          r.call("ids-distinct", () -> sp.getSavepointId() != sp2.getSavepointId()
              && sp.getSavepointId() >= 0);
          r.call("name", sp::getSavepointName);
          r.act("rollback-to-first", () -> c.rollback(sp));
          c.rollback();
        })
        .add("release-then-rollback-to", r -> {
          Connection c = r.openTransaction();
          Savepoint sp = c.setSavepoint("x");
          r.act("release", () -> c.releaseSavepoint(sp));
          r.act("rollback-to", () -> c.rollback(sp));
          r.act("rollback", c::rollback);
        })
        .add("savepoint-in-autocommit", r -> {
          Connection c = r.open();
          r.call("set", () -> c.setSavepoint() != null);
          r.call("set-named", () -> c.setSavepoint("n") != null);
        })
        .add("nested-rollback-to-outer", r -> {
          r.table("t");
          Connection c = r.openTransaction();
          Savepoint outer = c.setSavepoint("outer");
          r.u("a", c, "INSERT INTO t VALUES (1, 'a')");
          Savepoint inner = c.setSavepoint("inner");
          r.u("b", c, "INSERT INTO t VALUES (2, 'b')");
          r.act("rollback-outer", () -> c.rollback(outer));
          r.act("rollback-inner", () -> c.rollback(inner));
          r.u("c", c, "INSERT INTO t VALUES (3, 'c')");
          r.act("commit", c::commit);
          r.rows("t");
        })
        .add("error-recovered-by-savepoint", r -> {
          Connection c = r.transactionWithRowA("a");
          Savepoint sp = c.setSavepoint();
          r.u("dup", c, "INSERT INTO t VALUES (1, 'dup')");
          r.act("rollback-to", () -> c.rollback(sp));
          r.rowBThenCommit(c);
        })
        .add("savepoint-in-read-only-transaction", r -> {
          r.setup("DROP TABLE IF EXISTS t CASCADE", "CREATE TABLE t (id int PRIMARY KEY, v text)",
              "INSERT INTO t VALUES (1, 'a')");
          Connection c = r.openReadOnlyTransaction();
          r.q("first", c, "SELECT v FROM t");
          Savepoint sp = c.setSavepoint();
          r.q("bad", c, "SELECT 1/0");
          r.act("rollback-to", () -> c.rollback(sp));
          r.q("again", c, "SELECT v FROM t");
          r.act("commit", c::commit);
        })
        .add("savepoint-after-commit-is-gone", r -> {
          Connection c = r.openTransaction();
          Savepoint sp = c.setSavepoint("gone");
          c.commit();
          r.act("rollback-to", () -> c.rollback(sp));
          r.act("rollback", c::rollback);
        });
  }
}
