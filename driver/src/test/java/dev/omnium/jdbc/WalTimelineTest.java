package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Replay position to client time: the latest primary sample at or below the position. */
class WalTimelineTest {
  private static final long MS = 1_000_000L;
  private static final long T0 = 5_000_000 * MS;

  @Test
  void emptyTimelineKnowsNothing() {
    WalTimeline t = new WalTimeline(8);
    assertEquals(WalTimeline.UNKNOWN, t.containsCommitsBefore(Lsn.parse("0/5000000")));
    assertEquals(WalTimeline.UNKNOWN, t.newestSentNanos());
  }

  @Test
  void theLatestSampleAtOrBelowTheReplayPositionBoundsStaleness() {
    WalTimeline t = new WalTimeline(8);
    t.add(T0, 100);
    t.add(T0 + 100 * MS, 200);
    t.add(T0 + 200 * MS, 300);
    assertEquals(T0 + 200 * MS, t.containsCommitsBefore(300), "caught up: the newest sample");
    assertEquals(T0 + 200 * MS, t.containsCommitsBefore(350), "ahead of the newest sample");
    assertEquals(T0 + 100 * MS, t.containsCommitsBefore(299), "short of 300: only 200 is covered");
    assertEquals(T0, t.containsCommitsBefore(100));
    assertEquals(WalTimeline.UNKNOWN, t.containsCommitsBefore(99), "older than every sample");
  }

  @Test
  void anIdlePrimaryKeepsTheNewestSampleValid() {
    WalTimeline t = new WalTimeline(8);
    for (int i = 0; i < 5; i++) t.add(T0 + i * 100 * MS, 700);
    assertEquals(T0 + 400 * MS, t.containsCommitsBefore(700));
  }

  @Test
  void oldSamplesAreOverwrittenInOrder() {
    WalTimeline t = new WalTimeline(4);
    for (int i = 1; i <= 10; i++) t.add(T0 + i * MS, i * 10L);
    assertEquals(4, t.size());
    assertEquals(T0 + 10 * MS, t.newestSentNanos());
    assertEquals(T0 + 7 * MS, t.containsCommitsBefore(75));
    assertEquals(WalTimeline.UNKNOWN, t.containsCommitsBefore(65), "sample 6 was overwritten");
  }

  @Test
  void positionsCompareUnsigned() {
    WalTimeline t = new WalTimeline(4);
    long high = Lsn.parse("FFFFFFFF/10");
    t.add(T0, high);
    assertEquals(WalTimeline.UNKNOWN, t.containsCommitsBefore(Lsn.parse("1/0")));
    assertEquals(T0, t.containsCommitsBefore(Lsn.parse("FFFFFFFF/20")));
  }

  @Test
  void capacityCoversTheHorizon() {
    assertEquals(64, WalTimeline.covering(1000 * MS, 100 * MS).capacityForTest());
    assertEquals(802, WalTimeline.covering(60_000 * MS, 100 * MS).capacityForTest());
    assertEquals(4096, WalTimeline.covering(3_600_000 * MS, 1 * MS).capacityForTest());
  }

  /**
   * Read-your-writes asks for extra samples (every 10 ms while writes wait to be dated): the
   * history must still reach back as far as the horizon, not merely as many samples (issue 32:
   * 64 samples filled in 0.6 s, and a replica 3 s behind had an unknown lag).
   */
  @Test
  void historyReachesTheHorizonWhateverTheSamplingRate() {
    long interval = 1000 * MS;
    WalTimeline t = WalTimeline.covering(60_000 * MS, interval);
    long end = T0 + 20_000 * MS;
    for (long at = T0; at <= end; at += 10 * MS) {
      t.add(at, (at - T0) / MS + 1); // the position grows with time: 1 per ms
    }
    long threeSecondsAgo = (end - 3000 * MS - T0) / MS + 1;
    long dated = t.containsCommitsBefore(threeSecondsAgo);
    assertTrue(dated != WalTimeline.UNKNOWN, "a replica 3 s behind has a known lag");
    assertTrue(dated <= end - 3000 * MS && dated >= end - 3000 * MS - interval,
        "bounded within one interval: " + (end - dated) / MS + " ms");
    long eighteenSecondsAgo = (end - 18_000 * MS - T0) / MS + 1;
    assertTrue(t.containsCommitsBefore(eighteenSecondsAgo) != WalTimeline.UNKNOWN);
    // a commit 5 s ago is dated by a sample at or after it: never an earlier position
    long commit = end - 5000 * MS;
    long position = t.positionAfter(commit);
    assertTrue(position >= (commit - T0) / MS + 1 && position <= (commit - T0) / MS + 1001,
        "dated at most an interval late: " + position);
    // the latest samples are all kept: a fresh commit is dated exactly
    assertEquals((end - 20 * MS - T0) / MS + 1, t.positionAfter(end - 25 * MS));
  }

  @Test
  void aCommitIsDatedByTheFirstSampleSentAtOrAfterIt() {
    WalTimeline t = new WalTimeline(8);
    t.add(T0, Lsn.parse("0/100"));
    t.add(T0 + 10 * MS, Lsn.parse("0/200"));
    t.add(T0 + 20 * MS, Lsn.parse("0/300"));
    assertEquals(Lsn.parse("0/200"), t.positionAfter(T0 + 5 * MS));
    assertEquals(Lsn.parse("0/200"), t.positionAfter(T0 + 10 * MS), "sent at the same reading");
    assertEquals(Lsn.parse("0/100"), t.positionAfter(T0 - 1));
    assertEquals(0, t.positionAfter(T0 + 20 * MS + 1), "no sample after the commit yet");
  }

  @Test
  void aWaiterGetsTheNextSampleOrNothingWhenTheRoundFails() throws Exception {
    WalTimeline t = new WalTimeline(8);
    long commit = System.nanoTime();
    Thread sampler = new Thread(() -> t.add(System.nanoTime(), Lsn.parse("0/500")));
    sampler.start();
    assertEquals(Lsn.parse("0/500"), t.awaitPositionAfter(commit, 60_000 * MS));
    sampler.join();
    long later = System.nanoTime();
    Thread failing = new Thread(() -> t.failed(System.nanoTime()));
    failing.start();
    assertEquals(0, t.awaitPositionAfter(later, 60_000 * MS), "a failed round ends the wait");
    failing.join();
    assertEquals(0, t.awaitPositionAfter(System.nanoTime() + 60_000 * MS, 1), "bounded");
  }
}
