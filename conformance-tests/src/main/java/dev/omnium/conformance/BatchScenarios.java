package dev.omnium.conformance;

import static dev.omnium.conformance.OnConnection.after;

import java.sql.BatchUpdateException;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Arrays;

/** Statement and prepared batches, failures included (issue 12 defect 5). */
final class BatchScenarios {
  private BatchScenarios() { }

  /** Records a batch's counts, or its exception and the counts it carries. */
  /** The setup of most batch scenarios: an empty table t. */
  static void tableT(Run r) throws Exception {
    r.table("t");
  }

  /** @return {@code body} on a transaction opened after {@link #tableT} */
  static Scenario.Program inTransaction(OnConnection body) {
    return after(BatchScenarios::tableT, Run::openTransaction, body);
  }

  /** @return {@code body} on a read-only transaction opened after {@link #tableT} */
  static Scenario.Program inReadOnlyTransaction(OnConnection body) {
    return after(BatchScenarios::tableT, Run::openReadOnlyTransaction, body);
  }

  /** @return the program that runs {@code sql} as one statement batch into t, then shows t */
  static Scenario.Program statementBatch(String... sql) {
    return after(BatchScenarios::tableT, (r, c) -> {
      try (Statement st = c.createStatement()) {
        for (String s : sql) {
          st.addBatch(s);
        }
        batch(r, "batch", st);
      }
      r.rows("t");
    });
  }

  static void batch(Run r, String key, Statement st) {
    r.call(key, () -> {
      try {
        return Arrays.toString(st.executeBatch());
      } catch (BatchUpdateException e) {
        return Run.failure(e) + Arrays.toString(e.getUpdateCounts());
      }
    });
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("batches")
        .add("statement-batch", statementBatch("INSERT INTO t VALUES (1, 'a')",
            "INSERT INTO t VALUES (2, 'b')", "UPDATE t SET v = 'x'"))
        .add("prepared-batch", after(BatchScenarios::tableT, (r, c) -> {
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, ?)")) {
            for (int i = 1; i <= 5; i++) {
              ps.setInt(1, i);
              ps.setString(2, "v" + i);
              ps.addBatch();
            }
            batch(r, "batch", ps);
          }
          r.rows("t");
        }))
        .add("failing-statement-batch-autocommit", statementBatch(
            "INSERT INTO t VALUES (1, 'a')", "INSERT INTO t VALUES (1, 'dup')",
            "INSERT INTO t VALUES (2, 'b')"))
        .add("failed-batch-is-emptied", after(BatchScenarios::tableT, (r, c) -> {
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            st.addBatch("INSERT INTO t VALUES (1, 'dup')");
            batch(r, "first", st);
            batch(r, "second", st);
            st.addBatch("INSERT INTO t VALUES (5, 'e')");
            batch(r, "third", st);
          }
          r.rows("t");
        }))
        .add("failed-prepared-batch-is-emptied", inTransaction((r, c) -> {
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, ?)")) {
            ps.setInt(1, 1);
            ps.setString(2, "a");
            ps.addBatch();
            ps.setInt(1, 1);
            ps.setString(2, "dup");
            ps.addBatch();
            batch(r, "first", ps);
            r.act("rollback", c::rollback);
            batch(r, "retry-empty", ps);
            ps.setInt(1, 2);
            ps.setString(2, "b");
            ps.addBatch();
            batch(r, "fresh", ps);
            r.act("commit", c::commit);
          }
          r.rows("t");
        }))
        .add("clear-batch", after(BatchScenarios::tableT, (r, c) -> {
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            st.clearBatch();
            batch(r, "empty", st);
          }
          r.rows("t");
        }))
        .add("batch-in-transaction-rolled-back", inTransaction((r, c) -> {
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, 'x')")) {
            for (int i = 1; i <= 3; i++) {
              ps.setInt(1, i);
              ps.addBatch();
            }
            batch(r, "batch", ps);
          }
          r.activity("in-transaction");
          r.act("rollback", c::rollback);
          r.rows("t");
        }))
        .add("batch-with-select", statementBatch("INSERT INTO t VALUES (1, 'a')", "SELECT 1"))
        .add("large-batch", after(BatchScenarios::tableT, (r, c) -> {
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, 'x')")) {
            for (int i = 1; i <= 3; i++) {
              ps.setInt(1, i);
              ps.addBatch();
            }
            r.call("large", () -> Arrays.toString(ps.executeLargeBatch()));
          }
          r.rows("t");
        }))
        .add("batch-in-read-only-transaction", inReadOnlyTransaction((r, c) -> {
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            batch(r, "batch", st);
          }
          r.act("rollback", c::rollback);
          r.rows("t");
        }));
  }
}
