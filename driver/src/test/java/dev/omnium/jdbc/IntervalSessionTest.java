package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Early rounds: asked for by read-your-writes, bounded by a gap, never instead of the schedule. */
class IntervalSessionTest {
  private static final PgConnector NEVER =
      new PgConnector("jdbc:postgresql://127.0.0.1:1/x", new Properties(), "test");

  private static final class Counting extends IntervalSession {
    final AtomicInteger rounds = new AtomicInteger();

    Counting(Duration interval) {
      super(NEVER, interval, "test-interval", 500);
    }

    @Override
    void round() {
      rounds.incrementAndGet();
    }

    @Override
    boolean inFlight() {
      return false;
    }
  }

  private static void awaitRounds(Counting s, int n) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (s.rounds.get() < n && System.nanoTime() - deadline < 0) Thread.sleep(1);
    assertTrue(s.rounds.get() >= n, "rounds " + s.rounds.get() + " < " + n);
  }

  @Test
  void aRequestedRoundRunsLongBeforeTheInterval() throws Exception {
    try (Counting s = new Counting(Duration.ofHours(1))) {
      s.allowEarlyRounds(Duration.ofMillis(1));
      s.start();
      awaitRounds(s, 1);
      s.requestEarlyRound();
      awaitRounds(s, 2);
      s.requestEarlyRound();
      awaitRounds(s, 3);
    }
  }

  @Test
  void withoutEarlyRoundsARequestChangesNothing() throws Exception {
    try (Counting s = new Counting(Duration.ofHours(1))) {
      s.start();
      awaitRounds(s, 1);
      s.requestEarlyRound();
      Thread.sleep(50); // a wrong early round would have run by now; the schedule is an hour
      assertEquals(1, s.rounds.get());
    }
  }

  @Test
  void manyRequestsBetweenTwoRoundsCostOneRound() throws Exception {
    try (Counting s = new Counting(Duration.ofHours(1))) {
      s.allowEarlyRounds(Duration.ofHours(1)); // asked-for rounds wait for the gap: none here
      s.start();
      awaitRounds(s, 1);
      for (int i = 0; i < 1000; i++) s.requestEarlyRound();
      Thread.sleep(50);
      assertEquals(1, s.rounds.get(), "the gap bounds the extra rounds");
    }
  }
}
