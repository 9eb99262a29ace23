package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Read-your-writes bookkeeping of one router: the WAL position of the last write each thread
 * committed through omnium (with its expiry), the token format that carries a position to
 * another thread, request or service, and the queries that learn a position. A read that must see
 * a position goes to a replica only if that replica has replayed it.
 *
 * <p>A position omnium could not learn is {@link #UNKNOWN}: reads that must see it take the
 * fallback route (the primary, where every commit is visible) until the next position learnt on
 * the same thread or connection replaces it, or the TTL ends. A later position is always past the
 * earlier commit, since it was read after that commit completed.
 */
final class WritePositions {
  static final String TOKEN_PREFIX = "omnium:v1:";

  /** Compares above every real WAL position: no replica qualifies for a read that must see it. */
  static final long UNKNOWN = -1L;

  /**
   * The position after a commit. The insert position is used rather than the write position
   * because with synchronous_commit=off the commit record may still be in WAL buffers: the insert
   * position is never before it. Schema-qualified, so no search_path can shadow it; NULL rather
   * than an error when EXECUTE was revoked, so the query after a COMMIT in one pipeline can only
   * fail with the session, never on its own after the commit succeeded.
   */
  static final String POSITION_SQL = "SELECT CASE WHEN pg_catalog.has_function_privilege("
      + "'pg_catalog.pg_current_wal_insert_lsn()', 'EXECUTE') "
      + "THEN pg_catalog.pg_current_wal_insert_lsn()::text END";

  /** COMMIT and the position query in one round trip (one Sync, or one simple query). */
  static final String COMMIT_AND_POSITION_SQL = "COMMIT; " + POSITION_SQL;

  /** Per thread and mutable, so remembering a write allocates only once per thread. */
  private static final class Position {
    long lsn;
    long expiresNanos;
  }

  private final boolean enabled;
  private final boolean threadMode;
  private final long ttlNanos;
  private final ThreadLocal<Position> lastWrite = new ThreadLocal<>();

  WritePositions(String mode, long ttlNanos) {
    this.enabled = !"off".equals(mode);
    this.threadMode = "thread".equals(mode);
    this.ttlNanos = ttlNanos;
  }

  /** Whether committed writes record their WAL position. */
  boolean enabled() {
    return enabled;
  }

  /**
   * Records the calling thread's write at {@code lsn} ({@link #UNKNOWN} when it could not be
   * learnt). A known position replaces an unknown one; among known ones the later wins.
   */
  void remember(long lsn) {
    Position p = lastWrite.get();
    if (p == null) {
      p = new Position();
      lastWrite.set(p);
    }
    p.lsn = merge(p.lsn, lsn);
    p.expiresNanos = System.nanoTime() + ttlNanos;
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
   * Thread mode: the position this thread must see, 0 when none or expired. Costs one ThreadLocal
   * read.
   */
  long requiredForThisThread(long nowNanos) {
    if (!threadMode) return 0;
    Position p = lastWrite.get();
    return p == null || nowNanos - p.expiresNanos > 0 ? 0 : p.lsn;
  }

  /** The calling thread's last write as a token, or null. */
  String lastTokenOfThisThread() {
    Position p = lastWrite.get();
    return p == null || p.lsn == 0 ? null : token(p.lsn);
  }

  /** A token for {@code lsn}; an unknown position's token sends reads to the primary. */
  static String token(long lsn) {
    return TOKEN_PREFIX + (lsn == UNKNOWN ? "primary" : Lsn.format(lsn));
  }

  static long parseToken(String token) throws SQLException {
    if (token == null || !token.startsWith(TOKEN_PREFIX)) {
      throw new SQLException("omnium: not a write token: expected " + TOKEN_PREFIX
          + "<WAL position>", "HY000");
    }
    String position = token.substring(TOKEN_PREFIX.length());
    if (position.equals("primary")) return UNKNOWN;
    try {
      return Lsn.parse(position);
    } catch (IllegalArgumentException e) {
      throw new SQLException("omnium: not a write token: " + e.getMessage(), "HY000", e);
    }
  }

  /**
   * Commits the open transaction of {@code primary} and reads the position after it in the same
   * round trip. Any error is the commit's (the position query cannot fail on its own): it is
   * thrown as pgjdbc's {@code commit()} would throw it.
   *
   * @return the position, or {@link #UNKNOWN} when the server would not say
   */
  static long commitReturningPosition(Connection primary) throws SQLException {
    // A prepared statement, so that pgjdbc's per-session statement cache server-prepares both
    // parts after prepareThreshold uses: the primary then neither parses nor plans the position
    // query per commit (as a plain statement it doubled the cost of a short write transaction).
    try (PreparedStatement st = primary.prepareStatement(COMMIT_AND_POSITION_SQL)) {
      st.execute();
      // the first result is COMMIT's update count, the second the position
      if (!st.getMoreResults()) return UNKNOWN;
      try (ResultSet rs = st.getResultSet()) {
        return position(rs);
      }
    }
  }

  /**
   * The position after the last commit of {@code primary} (autocommit mode: one round trip).
   * Never throws: the write already committed.
   *
   * @return the position, or {@link #UNKNOWN} when it could not be read
   */
  static long currentPosition(Connection primary) {
    try (PreparedStatement st = primary.prepareStatement(POSITION_SQL);
        ResultSet rs = st.executeQuery()) {
      return position(rs);
    } catch (SQLException | RuntimeException e) {
      return UNKNOWN;
    }
  }

  private static long position(ResultSet rs) throws SQLException {
    String text = rs.next() ? rs.getString(1) : null;
    if (text == null) return UNKNOWN;
    try {
      return Lsn.parse(text);
    } catch (IllegalArgumentException e) {
      return UNKNOWN;
    }
  }
}
