package dev.omnium.ops;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs a unit of work that takes locks writers may wait behind, so that no writer waits longer
 * than the lock timeout: the work runs in one transaction with {@code SET LOCAL lock_timeout}
 * (transaction-scoped, so a transaction pooler cannot carry it to another client), and when
 * PostgreSQL gives up waiting (55P03) the transaction is rolled back, which lets the queued
 * writers through, and the work is tried again after a growing, jittered pause.
 */
final class LockRetry {
  /** What a retried unit of work runs in its transaction. */
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /** Told about every attempt that gave up on a lock. */
  interface Listener {
    void lockNotAvailable(int attempt, int attempts, SQLException e, Duration pause);
  }

  static final Duration FIRST_PAUSE = Duration.ofMillis(500);
  static final Duration MAX_PAUSE = Duration.ofSeconds(8);

  private final Duration lockTimeout;
  private final int retries;
  private final Duration firstPause;

  /**
   * @param lockTimeout the longest any statement of the work waits for a lock (over 0)
   * @param retries how many times a unit that gave up on a lock is tried again
   * @param firstPause the pause before the first retry; each next one doubles, up to 8 s
   */
  LockRetry(Duration lockTimeout, int retries, Duration firstPause) {
    this.lockTimeout = positive("lockTimeout", lockTimeout);
    this.retries = atLeastZero("retries", retries);
    this.firstPause = firstPause;
  }

  /** {@code d}, or an error naming the setting when it is not over 0. */
  static Duration positive(String name, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be over 0, got " + d);
    }
    return d;
  }

  /** {@code n}, or an error naming the setting when it is negative. */
  static int atLeastZero(String name, int n) {
    if (n < 0) {
      throw new IllegalArgumentException(name + " must be 0 or more, got " + n);
    }
    return n;
  }

  Duration lockTimeout() {
    return lockTimeout;
  }

  int retries() {
    return retries;
  }

  /** {@code SELECT set_config('lock_timeout', '2000ms', true)}: for this transaction only. */
  String setLocal() {
    return "SELECT set_config('lock_timeout', '" + lockTimeout.toMillis() + "ms', true)";
  }

  /**
   * Runs {@code work} in its own transaction on {@code c} (auto-commit is restored), retried on
   * 55P03.
   *
   * @throws SQLException the last failure: 55P03 when every attempt gave up on a lock
   */
  <T> T inTransaction(Connection c, Work<T> work, Listener listener) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    try {
      c.setAutoCommit(false);
      return retrying(() -> {
        try {
          Sql.exec(c, setLocal());
          T result = work.run(c);
          c.commit();
          return result;
        } catch (SQLException | RuntimeException e) {
          rollbackQuietly(c, e);
          throw e;
        }
      }, listener);
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }

  /** A unit of work retried as a whole; it does its own transaction handling. */
  interface Attempt<T> {
    T run() throws SQLException;
  }

  /** Runs {@code attempt}, and again (at most {@link #retries} times) while it fails on 55P03. */
  <T> T retrying(Attempt<T> attempt, Listener listener) throws SQLException {
    for (int i = 1; ; i++) {
      try {
        return attempt.run();
      } catch (SQLException e) {
        if (!Sql.hasState(e, Sql.LOCK_NOT_AVAILABLE) || i > retries) {
          throw e;
        }
        Duration pause = pause(i);
        if (listener != null) {
          listener.lockNotAvailable(i, retries + 1, e, pause);
        }
        sleep(pause);
      }
    }
  }

  /** firstPause * 2^(n-1), at most {@link #MAX_PAUSE}, ±25 % so a fleet does not retry in step. */
  Duration pause(int failedAttempt) {
    long base = Math.min(MAX_PAUSE.toMillis(),
        firstPause.toMillis() << Math.min(20, failedAttempt - 1));
    long jitter = base / 4;
    long ms = base - jitter + (jitter == 0 ? 0 : ThreadLocalRandom.current().nextLong(2 * jitter));
    return Duration.ofMillis(Math.max(0, ms));
  }

  static void sleep(Duration d) {
    long deadline = System.nanoTime() + d.toNanos();
    for (long left = d.toNanos(); left > 0; left = deadline - System.nanoTime()) {
      LockSupport.parkNanos(left);
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  static void rollbackQuietly(Connection c, Throwable cause) {
    try {
      if (!c.getAutoCommit()) {
        c.rollback();
      }
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }
}
