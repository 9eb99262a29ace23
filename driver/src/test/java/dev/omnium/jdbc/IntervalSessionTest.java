package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Early rounds: asked for by read-your-writes, bounded by a gap, never instead of the schedule.
 * Refused logins: each waits longer than the last; a server that does not answer is tried every
 * interval.
 */
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

  /** A session whose every login fails with {@code sqlState}; counts the logins. */
  private static final class Failing extends IntervalSession {
    final AtomicInteger logins = new AtomicInteger();
    final String sqlState;

    Failing(Duration interval, String sqlState) {
      super(NEVER, interval, "test-failing", 500); // connect() below never reaches it
      this.sqlState = sqlState;
    }

    @Override
    Connection connect() throws SQLException {
      logins.incrementAndGet();
      throw new SQLException("refused or down", sqlState);
    }

    @Override
    void round() {
      try {
        session();
      } catch (SQLException e) {
        // what a round does with it is the subclass's; the schedule is what is tested
      }
    }

    @Override
    boolean inFlight() {
      return false;
    }
  }

  @Test
  void refusedLoginsWaitLongerEachTime() throws Exception {
    try (Failing s = new Failing(Duration.ofMillis(20), "28P01")) {
      s.start();
      Thread.sleep(1000); // 50 intervals: 50 logins if each round tried again
      // at 0, 2, 6, 14 and 30 intervals (0, 40, 120, 280, 600 ms), the next at 62 (1240 ms)
      int logins = s.logins.get();
      assertTrue(logins >= 1 && logins <= 6, logins + " refused logins in 50 intervals");
    }
  }

  @Test
  void aServerThatDoesNotAnswerIsTriedEveryInterval() throws Exception {
    try (Failing s = new Failing(Duration.ofMillis(50), "08001")) {
      s.start();
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      // 12 logins take 0.6 s; waiting longer after each they would take 22 s
      while (s.logins.get() < 12 && System.nanoTime() - deadline < 0) Thread.sleep(5);
      assertTrue(s.logins.get() >= 12, s.logins.get() + " logins in 10 s");
    }
  }
}
