package dev.omnium.conformance;

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Arrays;

/** Statement and prepared batches, failures included (issue 12 defect 5). */
final class BatchScenarios {
  private BatchScenarios() { }

  /** Records a batch's counts, or its exception and the counts it carries. */
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
        .add("statement-batch", r -> {
          r.table("t");
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            st.addBatch("INSERT INTO t VALUES (2, 'b')");
            st.addBatch("UPDATE t SET v = 'x'");
            batch(r, "batch", st);
          }
          r.rows("t");
        })
        .add("prepared-batch", r -> {
          r.table("t");
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, ?)")) {
            for (int i = 1; i <= 5; i++) {
              ps.setInt(1, i);
              ps.setString(2, "v" + i);
              ps.addBatch();
            }
            batch(r, "batch", ps);
          }
          r.rows("t");
        })
        .add("failing-statement-batch-autocommit", r -> {
          r.table("t");
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            st.addBatch("INSERT INTO t VALUES (1, 'dup')");
            st.addBatch("INSERT INTO t VALUES (2, 'b')");
            batch(r, "batch", st);
          }
          r.rows("t");
        })
        .add("failed-batch-is-emptied", r -> {
          r.table("t");
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            st.addBatch("INSERT INTO t VALUES (1, 'dup')");
            batch(r, "first", st);
            batch(r, "second", st);
            st.addBatch("INSERT INTO t VALUES (5, 'e')");
            batch(r, "third", st);
          }
          r.rows("t");
        })
        .add("failed-prepared-batch-is-emptied", r -> {
          r.table("t");
          Connection c = r.openTransaction();
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
        })
        .add("clear-batch", r -> {
          r.table("t");
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            st.clearBatch();
            batch(r, "empty", st);
          }
          r.rows("t");
        })
        .add("batch-in-transaction-rolled-back", r -> {
          r.table("t");
          Connection c = r.openTransaction();
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
        })
        .add("batch-with-select", r -> {
          r.table("t");
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            st.addBatch("SELECT 1");
            batch(r, "batch", st);
          }
          r.rows("t");
        })
        .add("large-batch", r -> {
          r.table("t");
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, 'x')")) {
            for (int i = 1; i <= 3; i++) {
              ps.setInt(1, i);
              ps.addBatch();
            }
            r.call("large", () -> Arrays.toString(ps.executeLargeBatch()));
          }
          r.rows("t");
        })
        .add("batch-in-read-only-transaction", r -> {
          r.table("t");
          Connection c = r.openReadOnlyTransaction();
          try (Statement st = c.createStatement()) {
            st.addBatch("INSERT INTO t VALUES (1, 'a')");
            batch(r, "batch", st);
          }
          r.act("rollback", c::rollback);
          r.rows("t");
        });
  }
}
