package dev.omnium.jdbc;

import java.sql.SQLException;

/**
 * Read-your-writes bookkeeping of one router: the last write each thread committed through
 * omnium (with its expiry), the token format that carries a position to another thread, request
 * or service, and how a commit becomes a WAL position. A read that must see a position goes to a
 * replica only if that replica has replayed it.
 *
 * <p>A commit costs nothing but a clock reading: it is remembered as the client time its
 * {@code COMMIT} (or autocommit statement) returned. The first sample of the primary's
 * {@link PrimaryWalSampler} sent at or after that time has a WAL insert
 * position past the commit record ({@link WalTimeline#positionAfter}): that is the position a
 * replica must have replayed. Until such a sample exists, reads that must see the write take the
 * fallback route (the primary, where every commit is visible), and the first of them asks the
 * sampler for a sample soon: a thread that only writes never makes the sampler work harder.
 *
 * <p>A position omnium cannot learn (the sampler cannot read the primary) is {@link #UNKNOWN}:
 * such reads take the fallback route too.
 */
final class WritePositions {
  static final String TOKEN_PREFIX = "omnium:v1:";

  /** Compares above every real WAL position: no replica qualifies for a read that must see it. */
  static final long UNKNOWN = -1L;

  /** Per thread and mutable, so remembering a write allocates only once per thread. */
  private static final class Position {
    /** The known position this thread must see (0: none). */
    long lsn;
    /** A commit not yet dated by a sample: its client time, valid when {@code pending}. */
    long committedNanos;
    boolean pending;
    long expiresNanos;
  }

  private final boolean enabled;
  private final boolean threadMode;
  private final long ttlNanos;
  private final long tokenWaitNanos;
  /** The primary's samples, null without replicas (every read is then the primary's). */
  private final WalTimeline timeline;
  private final Runnable sampleRequest;
  private final ThreadLocal<Position> lastWrite = new ThreadLocal<>();

  /**
   * @param timeline the primary's samples, null without replicas
   * @param sampleRequest asks the primary's sampler for a sample soon
   * @param tokenWaitNanos how long a token waits for the sample that dates its commit
   */
  WritePositions(String mode, long ttlNanos, WalTimeline timeline, Runnable sampleRequest,
      long tokenWaitNanos) {
    this.enabled = !"off".equals(mode);
    this.threadMode = "thread".equals(mode);
    this.ttlNanos = ttlNanos;
    this.timeline = timeline;
    this.sampleRequest = sampleRequest;
    this.tokenWaitNanos = tokenWaitNanos;
  }

  /** Whether committed writes are remembered. */
  boolean enabled() {
    return enabled;
  }

  /**
   * A commit by the calling thread returned at {@code committedNanos} (or its session was lost
   * while committing): in thread mode its reads must see it from now on, and it is the thread's
   * last write for {@link #lastTokenOfThisThread}. The dating sample is asked for only when
   * something needs it: a read of this thread, or a token.
   */
  void committed(long committedNanos) {
    if (!enabled) return;
    Position p = lastWrite.get();
    if (p == null) {
      p = new Position();
      lastWrite.set(p);
    }
    p.committedNanos = committedNanos;
    p.pending = true;
    p.expiresNanos = committedNanos + ttlNanos;
  }

  /**
   * The position after every commit that returned by {@code committedNanos}, 0 while no sample
   * taken since dates it, {@link #UNKNOWN} without a sampler.
   */
  long positionAfter(long committedNanos) {
    return timeline == null ? UNKNOWN : timeline.positionAfter(committedNanos);
  }

  /**
   * Like {@link #positionAfter}, asking for a sample and waiting for it (bounded): for a token,
   * which must name a position. {@link #UNKNOWN} when none came.
   */
  long awaitPositionAfter(long committedNanos) {
    if (timeline == null) return UNKNOWN;
    long lsn = timeline.positionAfter(committedNanos);
    if (lsn != 0) return lsn;
    sampleRequest.run();
    try {
      lsn = timeline.awaitPositionAfter(committedNanos, tokenWaitNanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      lsn = 0;
    }
    return lsn == 0 ? UNKNOWN : lsn;
  }

  /**
   * The position that covers both an earlier recorded one and a newly learnt one: a known
   * position learnt later replaces {@link #UNKNOWN}; an unknown one replaces anything.
   */
  static long merge(long earlier, long later) {
    if (later == UNKNOWN || earlier == UNKNOWN) return later;
    return Long.compareUnsigned(later, earlier) > 0 ? later : earlier;
  }

  /**
   * Thread mode: the position this thread must see, 0 when none or expired, {@link #UNKNOWN}
   * while no sample dates its last commit yet (the sampler is then asked for one soon). Costs one
   * ThreadLocal read once dated.
   */
  long requiredForThisThread(long nowNanos) {
    if (!threadMode) return 0;
    Position p = lastWrite.get();
    if (p == null || nowNanos - p.expiresNanos > 0) return 0;
    if (p.pending) {
      long lsn = positionAfter(p.committedNanos);
      if (lsn == 0) { // a sampler exists (without one the position is UNKNOWN, not 0)
        sampleRequest.run(); // one round serves every such request
        return UNKNOWN;
      }
      p.lsn = merge(p.lsn, lsn);
      p.pending = false;
    }
    return p.lsn;
  }

  /** The calling thread's last write as a token, or null (waits for its sample, bounded). */
  String lastTokenOfThisThread() {
    Position p = lastWrite.get();
    if (p == null) return null;
    if (p.pending) {
      p.lsn = merge(p.lsn, awaitPositionAfter(p.committedNanos));
      p.pending = p.lsn == UNKNOWN;
    }
    return p.lsn == 0 ? null : token(p.lsn);
  }

  /** A token for {@code lsn}; an unknown position's token sends reads to the primary. */
  static String token(long lsn) {
    return TOKEN_PREFIX + (lsn == UNKNOWN ? "primary" : Lsn.format(lsn));
  }

  static long parseToken(String token) throws SQLException {
    if (token == null || !token.startsWith(TOKEN_PREFIX)) {
      throw new SQLException("omnium: not a write token: expected " + TOKEN_PREFIX
          + "<WAL position>", "22023");
    }
    String position = token.substring(TOKEN_PREFIX.length());
    if (position.equals("primary")) return UNKNOWN;
    try {
      return Lsn.parse(position);
    } catch (IllegalArgumentException e) {
      throw new SQLException("omnium: not a write token: " + e.getMessage(), "22023", e);
    }
  }
}
