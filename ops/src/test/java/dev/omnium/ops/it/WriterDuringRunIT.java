package dev.omnium.ops.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.ops.Retention;
import dev.omnium.ops.RetentionReport;
import dev.omnium.ops.RetentionReport.Verb;
import dev.omnium.ops.RetentionRules;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A writer inserts into the current month all through a run whose partition creation has to
 * queue behind a reader that holds the table for 5 s: with the lock timeout (2 s) the creation
 * gives up, lets the writer through, and is retried, so no insert waits much longer than 2 s;
 * with a lock timeout longer than the reader's hold (the control), the writer waits behind it.
 */
class WriterDuringRunIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(0).withoutHeartbeat().build();

  static final LocalDate TODAY = LocalDate.of(2026, 12, 4);
  /** The reader's hold on the table, longer than the lock timeout. */
  static final long HOLD_MS = 5_000;
  /** A loaded 2-core machine: an insert may take this much over the lock timeout. */
  static final long MARGIN_MS = 1_500;

  @Test
  void noInsertWaitsLongerThanTheLockTimeout() throws Exception {
    Db.monthlyTable(SANDBOX, "busy", "2026-12", 1);
    long worst = runWithWriter("busy", Duration.ofSeconds(2));
    assertTrue(worst >= 1_000, "the writer was never queued behind the creation (" + worst
        + " ms): this test would prove nothing");
    assertTrue(worst <= 2_000 + MARGIN_MS, "an insert waited " + worst + " ms, over the lock"
        + " timeout of 2000 ms + " + MARGIN_MS + " ms");
  }

  @Test
  void withoutAShortLockTimeoutTheWriterWaitsBehindTheQueuedCreation() throws Exception {
    Db.monthlyTable(SANDBOX, "busy2", "2026-12", 1);
    long worst = runWithWriter("busy2", Duration.ofSeconds(30));
    assertTrue(worst > 2_000 + MARGIN_MS, "the control should see the long wait the guard"
        + " prevents, saw " + worst + " ms");
  }

  /** Runs retention while a reader holds the table and a writer inserts; the worst insert, ms. */
  private long runWithWriter(String table, Duration lockTimeout) throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong worst = new AtomicLong();
    AtomicLong inserts = new AtomicLong();
    Thread writer = new Thread(() -> {
      try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary());
          PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
              + " (at, body) VALUES ('2026-12-04 12:00:00+00', 'live')")) {
        while (!stop.get()) {
          long t0 = System.nanoTime();
          ps.executeUpdate();
          worst.accumulateAndGet((System.nanoTime() - t0) / 1_000_000, Math::max);
          inserts.incrementAndGet();
          Poll.pause(20);
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, "writer");
    writer.start();
    Poll.until(Duration.ofSeconds(10), "the writer inserting", () -> inserts.get() > 5);

    RetentionReport report;
    try (Connection reader = Db.holdTable(SANDBOX, table)) {
      Thread release = Db.commitLater(reader, HOLD_MS);
      Properties p = new Properties();
      p.setProperty("user", SANDBOX.cluster().user());
      report = Retention.builder(SANDBOX.primary().jdbcUrl(), p)
          .rules(RetentionRules.parse("t", table + " month at 30d"))
          .lockTimeout(lockTimeout).lockRetries(8).build().run(TODAY);
      release.join();
      // The writer is never starved for good: once the hold ends it goes on writing.
      long after = inserts.get();
      Poll.until(Duration.ofSeconds(15), "the writer writing after the run",
          () -> inserts.get() > after + 3);
    } finally {
      stop.set(true);
      writer.join(30_000);
    }
    assertEquals(RetentionReport.OK, report.exitCode(), report.text());
    assertEquals(3, report.actions(Verb.CREATED).size(), report.text());
    assertEquals(4, Db.partitions(SANDBOX, table).size());
    System.out.printf("%s: lock timeout %d ms, %d inserts, worst %d ms%n", table,
        lockTimeout.toMillis(), inserts.get(), worst.get());
    return worst.get();
  }
}
