package dev.omnium.conformance;

import static dev.omnium.conformance.OnConnection.after;
import static dev.omnium.conformance.OnConnection.opened;

import java.sql.Connection;

/** setReadOnly / setAutoCommit in every order, with what each order lets a transaction do. */
final class TransitionScenarios {
  private TransitionScenarios() { }

  static void one(Run r) throws Exception {
    r.setup("DROP TABLE IF EXISTS t CASCADE", "CREATE TABLE t (id int PRIMARY KEY, v text)",
        "INSERT INTO t VALUES (1, 'a')");
  }

  /** @return {@code body} on a transaction opened after {@link #one} */
  static Scenario.Program inTransaction(OnConnection body) {
    return after(TransitionScenarios::one, Run::openTransaction, body);
  }

  /** @return {@code body} on a read-only transaction opened after {@link #one} */
  static Scenario.Program inReadOnlyTransaction(OnConnection body) {
    return after(TransitionScenarios::one, Run::openReadOnlyTransaction, body);
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("transitions")
        .add("read-only-then-manual", inReadOnlyTransaction((r, c) -> {
          r.q("ro", c, "SHOW transaction_read_only");
          r.q("read", c, "SELECT v FROM t");
          r.u("write", c, "INSERT INTO t VALUES (2, 'b')");
          r.act("rollback", c::rollback);
          r.rows("t");
        }))
        .add("manual-then-read-only", inTransaction((r, c) -> {
          c.setReadOnly(true);
          r.q("ro", c, "SHOW transaction_read_only");
          r.where("where", c);
          r.u("write", c, "UPDATE t SET v = 'x'");
          r.act("rollback", c::rollback);
          r.rows("t");
        }))
        .add("read-only-inside-transaction", inTransaction((r, c) -> {
          r.u("write", c, "UPDATE t SET v = 'w'");
          r.act("set-read-only", () -> c.setReadOnly(true));
          r.call("read-only", c::isReadOnly);
          r.q("ro", c, "SHOW transaction_read_only");
          r.act("commit", c::commit);
          r.rows("t");
        }))
        .add("read-only-then-write-after-commit", inReadOnlyTransaction((r, c) -> {
          r.q("read", c, "SELECT v FROM t");
          r.act("commit", c::commit);
          c.setReadOnly(false);
          r.where("where", c);
          r.u("write", c, "UPDATE t SET v = 'after'");
          r.act("commit2", c::commit);
          r.rows("t");
        }))
        .add("read-only-autocommit-read", after(TransitionScenarios::one, (r, c) -> {
          c.setReadOnly(true);
          r.where("where", c);
          r.q("read", c, "SELECT v FROM t");
          r.call("autocommit", c::getAutoCommit);
        }))
        .add("manual-write-then-autocommit", inTransaction((r, c) -> {
          r.u("write", c, "UPDATE t SET v = 'm'");
          r.act("autocommit", () -> c.setAutoCommit(true));
          r.rows("t");
          r.activity("after");
        }))
        .add("read-only-transaction-then-autocommit", inReadOnlyTransaction((r, c) -> {
          r.q("read", c, "SELECT v FROM t");
          r.act("autocommit", () -> c.setAutoCommit(true));
          r.activity("after");
          r.q("read2", c, "SELECT v FROM t");
        }))
        .add("toggle-read-only-before-work", after(TransitionScenarios::one, (r, c) -> {
          c.setReadOnly(true);
          c.setReadOnly(false);
          c.setAutoCommit(false);
          r.where("where", c);
          r.u("write", c, "UPDATE t SET v = 'toggled'");
          r.act("commit", c::commit);
          r.rows("t");
        }))
        .add("manual-read-only-autocommit-read-write", inTransaction((r, c) -> {
          c.setReadOnly(true);
          c.setAutoCommit(true);
          c.setReadOnly(false);
          r.where("where", c);
          r.u("write", c, "UPDATE t SET v = 'cycle'");
          r.rows("t");
        }))
        .add("read-only-after-rollback", inTransaction((r, c) -> {
          r.u("write", c, "UPDATE t SET v = 'rolled'");
          c.rollback();
          r.act("set-read-only", () -> c.setReadOnly(true));
          r.q("ro", c, "SHOW transaction_read_only");
          r.u("write2", c, "UPDATE t SET v = 'no'");
          c.rollback();
          r.rows("t");
        }))
        .add("set-same-autocommit-inside-transaction", inTransaction((r, c) -> {
          r.u("write", c, "UPDATE t SET v = 'same'");
          r.act("set-false-again", () -> c.setAutoCommit(false));
          r.activity("still-open");
          r.act("rollback", c::rollback);
          r.rows("t");
        }))
        .add("read-only-manual-commit-read-write-manual", inTransaction((r, c) -> {
          c.setReadOnly(true);
          r.q("read", c, "SELECT v FROM t");
          c.commit();
          c.setReadOnly(false);
          r.q("ro", c, "SHOW transaction_read_only");
          r.u("write", c, "UPDATE t SET v = 'rw'");
          c.commit();
          r.rows("t");
        }))
        .add("read-only-flag-getter", opened((r, c) -> {
          r.call("initial", c::isReadOnly);
          c.setReadOnly(true);
          r.call("set", c::isReadOnly);
          c.setAutoCommit(false);
          r.call("manual", c::isReadOnly);
          c.commit();
          c.setReadOnly(false);
          r.call("cleared", c::isReadOnly);
        }))
        .add("isolation-in-read-only-transaction", opened((r, c) -> {
          c.setReadOnly(true);
          c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
          c.setAutoCommit(false);
          r.q("isolation", c, "SELECT current_setting('transaction_isolation')");
          c.commit();
          c.setReadOnly(false);
          r.q("isolation-rw", c, "SELECT current_setting('transaction_isolation')");
          c.commit();
        }));
  }
}
