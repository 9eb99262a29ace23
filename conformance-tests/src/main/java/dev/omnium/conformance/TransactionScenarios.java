package dev.omnium.conformance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

/** Commit, rollback, aborted transactions, isolation, row locks. */
final class TransactionScenarios {
  private TransactionScenarios() { }

  static Scenarios.Group group() {
    return new Scenarios.Group("transactions")
        .add("autocommit-insert", r -> {
          r.table("t");
          Connection c = r.open();
          r.u("insert", c, "INSERT INTO t VALUES (1, 'a')");
          r.rows("t");
        })
        .add("commit-makes-visible", r -> {
          Connection c = r.transactionWithRowA("insert");
          r.rows("t");
          r.activity("in-transaction");
          r.act("commit", c::commit);
          r.rows("t");
          r.activity("after-commit");
        })
        .add("rollback-discards", r -> {
          Connection c = r.transactionWithRowA("insert");
          r.act("rollback", c::rollback);
          r.rows("t");
          r.q("select", c, "SELECT count(*) FROM t");
        })
        .add("close-without-commit", r -> {
          Connection c = r.transactionWithRowA("insert");
          r.act("close", c::close);
          r.rows("t");
        })
        .add("error-aborts-transaction", r -> {
          Connection c = r.transactionWithRowA("insert1");
          r.u("duplicate", c, "INSERT INTO t VALUES (1, 'b')");
          r.u("after-error", c, "INSERT INTO t VALUES (2, 'c')");
          r.activity("aborted");
          r.act("commit", c::commit);
          r.rows("t");
          r.u("next-transaction", c, "INSERT INTO t VALUES (3, 'd')");
          r.act("commit2", c::commit);
          r.rows("t");
        })
        .add("set-autocommit-true-commits", r -> {
          Connection c = r.transactionWithRowA("insert");
          r.act("autocommit-on", () -> c.setAutoCommit(true));
          r.rows("t");
          r.activity("after");
        })
        .add("commit-in-autocommit", r -> {
          Connection c = r.open();
          r.act("commit", c::commit);
          r.act("rollback", c::rollback);
        })
        .add("isolation-serializable", r -> {
          Connection c = r.open();
          r.act("set", () -> c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE));
          c.setAutoCommit(false);
          r.q("server", c, "SELECT current_setting('transaction_isolation')");
          r.call("get", c::getTransactionIsolation);
          c.commit();
          c.setAutoCommit(true);
          r.q("autocommit", c, "SELECT current_setting('transaction_isolation')");
        })
        .add("isolation-set-with-sql", r -> {
          Connection c = r.openTransaction();
          r.u("set", c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
          r.call("get", c::getTransactionIsolation);
          r.act("commit", c::commit);
          r.call("after", c::getTransactionIsolation);
        })
        .add("isolation-after-set-then-sql", r -> {
          Connection c = r.open();
          r.act("set", () -> c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE));
          c.setAutoCommit(false);
          r.u("sql", c, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
          r.call("get", c::getTransactionIsolation);
          r.act("rollback", c::rollback);
        })
        .add("isolation-change-inside-transaction", r -> {
          Connection c = r.openTransaction();
          r.q("first", c, "SELECT 1");
          r.act("set", () -> c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ));
          r.call("get", c::getTransactionIsolation);
          r.q("server", c, "SELECT current_setting('transaction_isolation')");
          c.rollback();
        })
        .add("select-for-update-locks", r -> {
          r.setup("DROP TABLE IF EXISTS t CASCADE", "CREATE TABLE t (id int PRIMARY KEY, v text)",
              "INSERT INTO t VALUES (1, 'a')");
          Connection a = r.open();
          Connection b = r.open();
          a.setAutoCommit(false);
          b.setAutoCommit(false);
          r.q("lock", a, "SELECT v FROM t WHERE id = 1 FOR UPDATE");
          r.activity("locked");
          r.q("nowait", b, "SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT");
          r.act("b-rollback", b::rollback);
          r.act("a-commit", a::commit);
          r.q("after", b, "SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT");
          r.act("b-commit", b::commit);
        })
        .add("set-local-reverts", r -> {
          Connection c = r.openTransaction();
          r.u("set", c, "SET LOCAL work_mem = '7MB'");
          r.q("inside", c, "SHOW work_mem");
          c.commit();
          r.q("after", c, "SHOW work_mem");
        })
        .add("set-rolled-back", r -> {
          Connection c = r.openTransaction();
          r.u("set", c, "SET work_mem = '9MB'");
          c.rollback();
          r.q("after", c, "SHOW work_mem");
        })
        .add("read-write-transaction-flag", r -> {
          Connection c = r.openTransaction();
          r.q("ro", c, "SHOW transaction_read_only");
          c.commit();
        })
        .add("prepared-reuse-across-commits", r -> {
          r.table("t");
          Connection c = r.openTransaction();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, ?)")) {
            for (int i = 1; i <= 6; i++) {
              int id = i;
              ps.setInt(1, id);
              ps.setString(2, "v" + id);
              r.call("insert" + id, ps::executeUpdate);
              if (i % 2 == 0) {
                r.act("commit" + id, c::commit);
              }
            }
          }
          r.rows("t");
        })
        .add("statement-outlives-commit", r -> {
          r.table("t");
          Connection c = r.openTransaction();
          Statement st = c.createStatement();
          r.call("insert", () -> st.executeUpdate("INSERT INTO t VALUES (1, 'a')"));
          c.commit();
          r.call("select", () -> {
            try (ResultSet rs = st.executeQuery("SELECT v FROM t")) {
              return Run.renderRows(rs);
            }
          });
          c.commit();
          st.close();
        });
  }
}
