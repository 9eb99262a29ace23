package dev.omnium.jdbc;

import java.sql.SQLException;

/**
 * Read-your-writes bookkeeping of one router: the WAL position of the last write each thread
 * committed through omnium (with its expiry), and the token format that carries a position to
 * another thread, request or service. A read that must see a position goes to a replica only if
 * that replica has replayed it.
 */
final class WritePositions {
  static final String TOKEN_PREFIX = "omnium:v1:";

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

  /** Whether writes record their WAL position (one extra round trip per write transaction). */
  boolean enabled() {
    return enabled;
  }

  void remember(long lsn) {
    Position p = lastWrite.get();
    if (p == null) {
      p = new Position();
      lastWrite.set(p);
    }
    if (Long.compareUnsigned(lsn, p.lsn) > 0) p.lsn = lsn;
    p.expiresNanos = System.nanoTime() + ttlNanos;
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

  static String token(long lsn) {
    return TOKEN_PREFIX + Lsn.format(lsn);
  }

  static long parseToken(String token) throws SQLException {
    if (token == null || !token.startsWith(TOKEN_PREFIX)) {
      throw new SQLException("omnium: not a write token: expected " + TOKEN_PREFIX
          + "<WAL position>", "HY000");
    }
    try {
      return Lsn.parse(token.substring(TOKEN_PREFIX.length()));
    } catch (IllegalArgumentException e) {
      throw new SQLException("omnium: not a write token: " + e.getMessage(), "HY000", e);
    }
  }
}
