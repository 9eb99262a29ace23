package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
    assertEquals(602, WalTimeline.covering(60_000 * MS, 100 * MS).capacityForTest());
    assertEquals(4096, WalTimeline.covering(3_600_000 * MS, 1 * MS).capacityForTest());
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
