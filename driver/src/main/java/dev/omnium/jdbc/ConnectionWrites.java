package dev.omnium.jdbc;

import java.sql.SQLException;

/**
 * Read-your-writes for one logical connection: the last commit it made on the primary, and the
 * position its read-only work must see (a token it was given). A commit is remembered as the
 * client time it returned; its WAL position is learnt from the primary's sampler when a token is
 * asked for (see {@link WritePositions}). Nothing here costs anything with
 * {@code readYourWrites=off}, and a commit costs a clock reading with it on.
 */
final class ConnectionWrites {
  private final WritePositions positions;
  /** The last commit's client time, valid when {@code pending}; then dated into lastWriteLsn. */
  private long lastCommitNanos;
  private boolean pending;
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
   * A commit on the primary returned: an autocommit write, {@code commit()}, or
   * {@code setAutoCommit(true)} ending an open transaction.
   */
  void committed() {
    if (!positions.enabled()) return;
    long now = System.nanoTime();
    lastCommitNanos = now;
    pending = true;
    positions.committed(now);
  }

  /**
   * A commit failed with {@code e}: when the session was lost, the commit may have happened, so
   * it is remembered as if it returned now (its readers take the primary until a sample dates
   * it); any other error committed nothing.
   */
  void commitFailed(SQLException e) {
    if (SqlStates.connectionDead(e)) committed();
  }

  /**
   * Whether this connection remembers a commit or was given a token. Never waits, unlike
   * {@link #lastToken()}, which may wait for the sample that dates the last commit.
   */
  boolean remembersAny() {
    return pending || lastWriteLsn != 0 || requiredLsn != 0;
  }

  /** The last committed write as a token, or null before the first one (waits, bounded). */
  String lastToken() {
    if (pending) {
      lastWriteLsn = WritePositions.merge(lastWriteLsn,
          positions.awaitPositionAfter(lastCommitNanos));
      pending = lastWriteLsn == WritePositions.UNKNOWN;
    }
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
