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
 * <p>Two rings: the latest samples, at whatever rate they come (read-your-writes asks for extra
 * ones, up to one per 10 ms, to date commits at once), and the history, at most one sample per
 * {@code minGapNanos}, which reaches back as far as the horizon it was sized for whatever that
 * rate: a replica seconds behind is dated by it, within one interval.
 *
 * <p>Written by the primary sampler, read by the watchers after each probe and by
 * read-your-writes, which dates a commit by the first sample sent after it returned
 * ({@link #positionAfter}): cold paths, so a plain monitor; the routing decision only touches it
 * in the moments after a remembered write, before a sample covers it.
 */
final class WalTimeline {
  /** No sample covers the position: staleness unknown. Same value as {@link LagWatcher#UNKNOWN}. */
  static final long UNKNOWN = Long.MIN_VALUE;

  /** The latest samples. */
  private final long[] sent;
  private final long[] lsn;
  private int next;
  private int size;
  /** The history: samples at least {@link #minGapNanos} apart; empty arrays when not kept. */
  private final long[] historySent;
  private final long[] historyLsn;
  private final long minGapNanos;
  private int historyNext;
  private int historySize;
  /** The last failed round's start, valid when {@code anyFailure}. */
  private boolean anyFailure;
  private long failedSentNanos;

  /** @param capacity the latest samples kept, and no history: how far back lag can be told */
  WalTimeline(int capacity) {
    this(capacity, 0, 0);
  }

  private WalTimeline(int capacity, int historyCapacity, long minGapNanos) {
    if (capacity < 2) throw new IllegalArgumentException("capacity " + capacity);
    this.sent = new long[capacity];
    this.lsn = new long[capacity];
    this.historySent = new long[historyCapacity];
    this.historyLsn = new long[historyCapacity];
    this.minGapNanos = minGapNanos;
  }

  /** Latest samples kept besides the history: a few hundred milliseconds of early samples. */
  static final int LATEST = 64;

  /**
   * For samples every {@code intervalNanos} (and more in between): the latest {@value #LATEST},
   * and a history of one sample per three quarters of an interval (every scheduled sample, jitter
   * included) reaching back {@code horizonNanos}, 64 to 4096 of them.
   */
  static WalTimeline covering(long horizonNanos, long intervalNanos) {
    long gap = Math.max(1, intervalNanos * 3 / 4);
    long n = horizonNanos / gap + 2;
    return new WalTimeline(LATEST, (int) Math.max(64, Math.min(4096, n)), gap);
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
    int h = historySent.length;
    if (h > 0 && (historySize == 0
        || sentNanos - historySent[Math.floorMod(historyNext - 1, h)] >= minGapNanos)) {
      historySent[historyNext] = sentNanos;
      historyLsn[historyNext] = insertLsn;
      historyNext = (historyNext + 1) % h;
      if (historySize < h) historySize++;
    }
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
    // older than every latest sample: the history, newest first
    for (int k = 1; k <= historySize; k++) {
      int i = Math.floorMod(historyNext - k, historySent.length);
      if (Long.compareUnsigned(historyLsn[i], replayLsn) <= 0) return historySent[i];
    }
    return UNKNOWN;
  }

  /**
   * The position of the first sample sent at or after {@code clientNanos}: every transaction
   * whose commit had returned by then ends below it. 0 when no such sample has been taken yet.
   */
  synchronized long positionAfter(long clientNanos) {
    long found = 0;
    long foundSent = 0;
    for (int k = 1; k <= size; k++) {
      int i = Math.floorMod(next - k, sent.length);
      if (sent[i] - clientNanos < 0) return found;
      found = lsn[i];
      foundSent = sent[i];
    }
    // every latest sample is after it: an earlier one may be in the history (one dropped from
    // it makes the position a later sample's: higher, the safe direction)
    for (int k = 1; k <= historySize; k++) {
      int i = Math.floorMod(historyNext - k, historySent.length);
      if (historySent[i] - clientNanos < 0) break;
      if (found == 0 || historySent[i] - foundSent < 0) {
        found = historyLsn[i];
        foundSent = historySent[i];
      }
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
    return historySent.length > 0 ? historySent.length : sent.length;
  }
}
