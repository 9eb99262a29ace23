package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Read-your-writes for one logical connection: the last position it committed on the primary,
 * and the one its read-only work must see (a token it was given). Nothing here costs anything
 * with {@code readYourWrites=off}.
 */
final class ConnectionWrites {
  private final WritePositions positions;
  private long lastWriteLsn;
  private long requiredLsn;

  ConnectionWrites(WritePositions positions) {
    this.positions = positions;
  }

  boolean enabled() {
    return positions.enabled();
  }

  /** The WAL position this unit of work must see, 0 when none. */
  long requiredPosition(long nowNanos) {
    long thread = positions.requiredForThisThread(nowNanos);
    long own = requiredLsn;
    return Long.compareUnsigned(thread, own) >= 0 ? thread : own;
  }

  /**
   * After an autocommit write on {@code primary}: where the primary's WAL ends now (one query;
   * the statement already committed, so this never fails it).
   */
  void afterCommit(Connection primary) {
    if (positions.enabled() && primary != null) record(WritePositions.currentPosition(primary));
  }

  /** Commits the primary's open transaction, learning its position in the same round trip. */
  void commit(Connection primary) throws SQLException {
    long lsn;
    try {
      lsn = WritePositions.commitReturningPosition(primary);
    } catch (SQLException e) {
      // a lost session may have committed: its readers take the primary until a position is known
      if (SqlStates.connectionDead(e)) record(WritePositions.UNKNOWN);
      throw e;
    }
    record(lsn);
  }

  private void record(long lsn) {
    lastWriteLsn = WritePositions.merge(lastWriteLsn, lsn);
    positions.remember(lsn);
  }

  /** The last committed write as a token, or null before the first one. */
  String lastToken() {
    return lastWriteLsn == 0 ? null : WritePositions.token(lastWriteLsn);
  }

  /** The token read-only work must see, or null. */
  String requiredToken() {
    return requiredLsn == 0 ? null : WritePositions.token(requiredLsn);
  }

  void require(String token) throws SQLException {
    requiredLsn = token == null ? 0 : WritePositions.parseToken(token);
  }
}
