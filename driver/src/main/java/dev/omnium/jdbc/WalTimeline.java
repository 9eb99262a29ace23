package dev.omnium.jdbc;

import java.util.concurrent.TimeUnit;

/**
 * The primary's WAL insert position, sampled with the client's monotonic clock: the clock-free
 * bridge between a replica's replay position and the client's time.
 *
 * <p>A sample {@code (sent, lsn)} means: the query that read {@code lsn} was sent at client time
 * {@code sent}, so every transaction whose commit had returned before {@code sent} wrote its
 * commit record below {@code lsn}. A replica that has replayed up to {@code lsn} therefore shows
 * every transaction that committed before {@code sent}: its staleness at client time {@code t}
 * is at most {@code t - sent}. No server clock takes part.
 *
 * <p>Written by the primary sampler, read by the watchers after each probe and by
 * read-your-writes, which dates a commit by the first sample sent after it returned
 * ({@link #positionAfter}): cold paths, so a plain monitor; the routing decision only touches it
 * in the moments after a remembered write, before a sample covers it.
 */
final class WalTimeline {
  /** No sample covers the position: staleness unknown. Same value as {@link LagWatcher#UNKNOWN}. */
  static final long UNKNOWN = Long.MIN_VALUE;

  private final long[] sent;
  private final long[] lsn;
  private int next;
  private int size;
  /** The last failed round's start, valid when {@code anyFailure}. */
  private boolean anyFailure;
  private long failedSentNanos;

  /** @param capacity samples kept; with one sample per interval, how far back lag can be told */
  WalTimeline(int capacity) {
    if (capacity < 2) throw new IllegalArgumentException("capacity " + capacity);
    this.sent = new long[capacity];
    this.lsn = new long[capacity];
  }

  /** Samples kept for {@code interval}: about {@code horizonNanos} of history, 64 to 4096. */
  static WalTimeline covering(long horizonNanos, long intervalNanos) {
    long n = horizonNanos / Math.max(1, intervalNanos) + 2;
    return new WalTimeline((int) Math.max(64, Math.min(4096, n)));
  }

  /**
   * Adds a sample; samples come in the order they were sent.
   *
   * @param sentNanos {@link System#nanoTime()} just before the query was sent
   * @param insertLsn the primary's {@code pg_current_wal_insert_lsn()} it returned
   */
  synchronized void add(long sentNanos, long insertLsn) {
    sent[next] = sentNanos;
    lsn[next] = insertLsn;
    next = (next + 1) % sent.length;
    if (size < sent.length) size++;
    notifyAll();
  }

  /**
   * The latest client time before which every commit on the primary is contained in a replica
   * that replayed up to {@code replayLsn}; {@link #UNKNOWN} when no kept sample is that old.
   */
  synchronized long containsCommitsBefore(long replayLsn) {
    for (int k = 1; k <= size; k++) {
      int i = Math.floorMod(next - k, sent.length);
      if (Long.compareUnsigned(lsn[i], replayLsn) <= 0) return sent[i];
    }
    return UNKNOWN;
  }

  /**
   * The position of the first sample sent at or after {@code clientNanos}: every transaction
   * whose commit had returned by then ends below it. 0 when no such sample has been taken yet.
   */
  synchronized long positionAfter(long clientNanos) {
    long found = 0;
    for (int k = 1; k <= size; k++) {
      int i = Math.floorMod(next - k, sent.length);
      if (sent[i] - clientNanos < 0) break;
      found = lsn[i];
    }
    return found;
  }

  /**
   * Like {@link #positionAfter}, waiting up to {@code timeoutNanos} for such a sample; 0 when
   * none came in time or a sampling round that started after {@code clientNanos} failed.
   */
  synchronized long awaitPositionAfter(long clientNanos, long timeoutNanos)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      long lsn = positionAfter(clientNanos);
      if (lsn != 0) return lsn;
      if (anyFailure && failedSentNanos - clientNanos >= 0) return 0;
      long left = deadline - System.nanoTime();
      if (left <= 0) return 0;
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  /** A sampling round that started at {@code sentNanos} could not read the position. */
  synchronized void failed(long sentNanos) {
    anyFailure = true;
    failedSentNanos = sentNanos;
    notifyAll();
  }

  /** When the newest sample was sent, {@link #UNKNOWN} when there is none. */
  synchronized long newestSentNanos() {
    return size == 0 ? UNKNOWN : sent[Math.floorMod(next - 1, sent.length)];
  }

  synchronized int size() {
    return size;
  }

  int capacityForTest() {
    return sent.length;
  }
}
