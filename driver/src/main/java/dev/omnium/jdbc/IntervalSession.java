package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * A dedicated connection worked by its own daemon thread once per interval: the heartbeat writer,
 * each replica's lag watcher and the primary's WAL sampler. The session is opened on first use,
 * dropped after any error (the next round reconnects) and when the thread ends; closing never
 * waits for a frozen server longer than {@code joinMillis}, since the socket is aborted.
 *
 * <p>A login the server refuses ({@link SqlStates#loginRefused}: a changed password, a dropped
 * role, an untrusted certificate) fails the same way until someone changes the server or the
 * credentials, so the next round waits twice as long after each refusal in a row, up to
 * {@code 2^MAX_BACKOFF_SHIFT} intervals, and comes within an interval once the connector's
 * credentials rotate: every process of a fleet trying a stale password every interval would
 * flood the servers' logs, and lock the account where the authentication counts failures (LDAP,
 * PAM).
 */
abstract class IntervalSession implements Runnable, AutoCloseable {
  /** Null until the first round connects, and again after each drop. */
  private volatile Connection connection;
  private volatile boolean closed;
  /** A round was asked for before its time ({@link #requestEarlyRound}). */
  private volatile boolean early;
  /** Earliest start of an asked-for round after the previous round's start; 0: never asked. */
  private long earlyGapNanos;
  private final PgConnector connector;
  private final long intervalNanos;
  /** How long {@link #close()} waits for the thread before aborting the socket. */
  private final long joinMillis;
  private final Thread thread;
  /** The credentials of the last login when the server refused it; null after any other outcome. */
  private volatile Object refusedWith;
  /** Rounds in a row whose login was refused, at most MAX_BACKOFF_SHIFT (the thread's own). */
  private int refusals;

  /** The longest wait after refused logins: 2^6 = 64 intervals. */
  static final int MAX_BACKOFF_SHIFT = 6;

  IntervalSession(PgConnector connector, Duration interval, String threadName, long joinMillis) {
    thread = new Thread(this, threadName);
    thread.setDaemon(true);
    this.connector = connector;
    this.intervalNanos = interval.toNanos();
    this.joinMillis = joinMillis;
  }

  /** One round on the thread; never throws. */
  abstract void round();

  /** Whether a round is in flight on the session now: {@link #stop()} then aborts its socket. */
  abstract boolean inFlight();

  /** A new session for the rounds (a lag watcher's may have to reach one server). */
  Connection connect() throws SQLException {
    return connector.connect();
  }

  /** Prepares a new session before a round uses it; if this throws, that round drops it. */
  void prepare(Connection c) throws SQLException {
    // nothing by default
  }

  /**
   * Lets {@link #requestEarlyRound} start a round as soon as {@code gap} after the previous
   * round started, instead of waiting for the interval: a bound on the extra rounds.
   */
  final void allowEarlyRounds(Duration gap) {
    earlyGapNanos = Math.max(1, gap.toNanos());
  }

  /**
   * Asks for a round soon (see {@link #allowEarlyRounds}); one round serves every request made
   * before it started. Costs the caller a volatile read, and an unpark only for the first request.
   */
  final void requestEarlyRound() {
    if (!early && earlyGapNanos > 0) {
      early = true;
      LockSupport.unpark(thread);
    }
  }

  /** Where its session comes from (and how that session gets its settings). */
  final PgConnector connector() {
    return connector;
  }

  final long intervalNanos() {
    return intervalNanos;
  }

  final boolean threadRunnable() {
    return thread.getState() == Thread.State.RUNNABLE;
  }

  void start() {
    thread.start();
  }

  @Override
  public final void run() {
    Tracing.quietThread();
    long next = System.nanoTime();
    while (!closed) {
      long started = System.nanoTime();
      early = false; // a request made before this round started is served by it
      round();
      long now = System.nanoTime();
      Object refused = refusedWith;
      if (refused == null) {
        refusals = 0;
        if (next - started <= 0) { // the scheduled round, not an early one: schedule the next
          next += intervalNanos;
          if (next < now) next = now; // a slow round does not cause a burst of catch-up rounds
        }
      } else {
        refusals = Math.min(refusals + 1, MAX_BACKOFF_SHIFT);
        next = started + (intervalNanos << refusals);
      }
      while (!closed && (now = System.nanoTime()) < next) {
        long until = next;
        if (refused != null) {
          // no early rounds while refused; new credentials are tried at the next wake-up
          if (connector.nextCredentials() != refused) break;
          if (until - now > intervalNanos) until = now + intervalNanos;
        } else if (early) {
          long soon = started + earlyGapNanos;
          if (soon - now <= 0) break;
          if (soon - until < 0) until = soon;
        }
        LockSupport.parkNanos(this, until - now);
      }
    }
    dropSession();
  }

  /** The open session, connecting (and {@link #prepare preparing}) one when there is none. */
  final Connection session() throws SQLException {
    Connection c = connection;
    if (c == null) {
      Object credentials = connector.nextCredentials();
      try {
        c = connect();
      } catch (SQLException e) {
        refusedWith = SqlStates.loginRefused(e) ? credentials : null;
        throw e;
      }
      refusedWith = null;
      connection = c;
      prepare(c);
    }
    return c;
  }

  /** Closes the session, if any, quietly: it is being discarded. */
  void dropSession() {
    Connection c = connection;
    connection = null;
    if (c == null) return;
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // the session is gone either way
    }
  }

  /**
   * Asks the thread to end without waiting: a round in flight (on a frozen or dead server) has
   * its socket aborted now, so stopping many sessions costs no socket timeout.
   */
  void stop() {
    closed = true;
    LockSupport.unpark(thread);
    if (inFlight()) abortSession();
  }

  @Override
  public void close() {
    stop();
    try {
      // A thread stuck in a connect ends at its connect timeout, and closes that session at once.
      thread.join(joinMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // Stuck in a read on a frozen server: abort the socket so the thread ends now.
    if (thread.isAlive()) abortSession();
  }

  private void abortSession() {
    Connection c = connection;
    if (c != null) {
      try {
        c.abort(Runnable::run);
      } catch (SQLException | RuntimeException ignored) {
        // the socket timeout ends the thread
      }
    }
  }
}
