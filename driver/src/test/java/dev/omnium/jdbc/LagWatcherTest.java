package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Lag arithmetic: now minus the client time the replica is known to cover; unknown is infinite. */
class LagWatcherTest {
  private static final long MS = 1_000_000L;
  private static final long T0 = 1_000_000 * MS; // an arbitrary nanoTime origin

  private static LagWatcher watcher(Duration interval) {
    PgConnector never = new PgConnector("jdbc:postgresql://127.0.0.1:1/x", new Properties(),
        "test");
    return new LagWatcher("r1", never, "replica_heartbeat", interval, "test-watcher");
  }

  @Test
  void noMeasurementMeansInfiniteLag() {
    LagWatcher w = watcher(Duration.ofSeconds(1));
    assertEquals(Long.MAX_VALUE, w.effectiveLagNanos(T0));
    assertFalse(w.isFresh(T0, Long.MAX_VALUE / 2), "never fresh without a measurement");
  }

  @Test
  void effectiveLagGrowsWithTheAgeOfTheMeasurement() {
    LagWatcher w = watcher(Duration.ofSeconds(1));
    w.record(T0, 0.25);
    assertEquals(250 * MS, w.effectiveLagNanos(T0));
    assertEquals(1250 * MS, w.effectiveLagNanos(T0 + 1000 * MS));
    assertTrue(w.isFresh(T0 + 1000 * MS, 1250 * MS), "exactly maxAge is fresh enough");
    assertFalse(w.isFresh(T0 + 1000 * MS + 1, 1250 * MS));
  }

  @Test
  void negativeReadingsFromClockSkewCountAsZero() {
    LagWatcher w = watcher(Duration.ofSeconds(1));
    w.record(T0, -0.5);
    assertEquals(0, w.effectiveLagNanos(T0));
    assertEquals(10 * MS, w.effectiveLagNanos(T0 + 10 * MS));
  }

  @Test
  void aStalledProbeMakesTheReplicaUnusableBeforeMaxAgeRunsOut() {
    LagWatcher w = watcher(Duration.ofMillis(200)); // stall threshold: max(2 intervals, 1 s) = 1 s
    w.record(T0, 0.0);
    w.probeInFlightSince(T0 + 100 * MS);
    assertTrue(w.isFresh(T0 + 900 * MS, 5000 * MS),
        "a probe in flight for 0.8 s is not stalled yet");
    assertFalse(w.isFresh(T0 + 1200 * MS, 5000 * MS), "in flight 1.1 s: the replica is skipped");
    assertEquals(Long.MAX_VALUE, w.effectiveLagNanos(T0 + 1200 * MS));
    w.probeInFlightSince(0);
    assertTrue(w.isFresh(T0 + 1200 * MS, 5000 * MS), "answered: usable again");
  }

  @Test
  void forgettingTheMeasurementIsInfiniteAgain() {
    LagWatcher w = watcher(Duration.ofSeconds(1));
    w.record(T0, 0.1);
    w.forget();
    assertEquals(Long.MAX_VALUE, w.effectiveLagNanos(T0));
  }

  @Test
  void aPositionMeasurementIsTheAgeOfTheSampleItCovers() {
    LagWatcher w = watcher(Duration.ofMillis(100));
    WalTimeline t = new WalTimeline(8);
    t.add(T0, 1000);
    t.add(T0 + 100 * MS, 2000);
    w.containsCommitsBefore(t.containsCommitsBefore(1500));
    assertEquals(300 * MS, w.effectiveLagNanos(T0 + 300 * MS), "covers the sample sent at T0 only");
    assertFalse(w.isFresh(T0 + 300 * MS, 250 * MS));
    w.containsCommitsBefore(t.containsCommitsBefore(2000));
    assertEquals(200 * MS, w.effectiveLagNanos(T0 + 300 * MS));
    w.containsCommitsBefore(t.containsCommitsBefore(999));
    assertEquals(Long.MAX_VALUE, w.effectiveLagNanos(T0 + 300 * MS), "older than every sample");
  }

  @Test
  void walPositionsParseAndCompareUnsigned() {
    assertEquals(0x16B374D848L, Lsn.parse("16/B374D848"));
    assertEquals("16/B374D848", Lsn.format(Lsn.parse("16/B374D848")));
    assertTrue(Long.compareUnsigned(Lsn.parse("FFFFFFFF/0"), Lsn.parse("1/0")) > 0);
  }
}
