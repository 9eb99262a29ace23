package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import com.zaxxer.hikari.metrics.IMetricsTracker;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.pool.HikariPool;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A wait for a session of an internal pool that ends as soon as the pool's connector has its
 * logins refused (docs/reliability.md, "Fail fast with the real cause"): the caller then gets what
 * pgjdbc's own connect reports, the server's SQLState and message, instead of HikariCP's timeout
 * after {@code poolTimeout}. Only a server that does not answer, or a pool whose every session is
 * in use, costs the wait.
 *
 * <p>HikariCP cannot be told to stop waiting, so the wait is cut into slices (50 ms, doubling up
 * to 2 s) and the connector's last outcome is looked at between them; a refused login with no
 * idle session left ends it, unless no login has been tried since it for longer than HikariCP's
 * longest pause between two (a pool that keeps nothing idle stops trying while nobody waits): such
 * a refusal says nothing about the credentials now, and the wait's first slice asks for a login.
 * An idle session is lent by the first slice at once, as before.
 * HikariCP reports each slice that ends empty to its metrics tracker as a timeout: the tracker
 * this class puts in front of the pools' ({@link #metrics}) keeps those back, so
 * {@code hikaricp.connections.timeout} still counts one per wait that timed out, and
 * {@code hikaricp.connections.acquire} the whole wait.
 */
final class PoolWait {
  /** What the wait looks at between slices: the pool's connector ({@link PgConnector}). */
  interface Refusals {
    /** The server's refusal of the latest login, or null when it succeeded or failed otherwise. */
    Refused refused();
  }

  /**
   * A login the server refused.
   *
   * @param error what pgjdbc's connect threw
   * @param atNanos when ({@link System#nanoTime()})
   */
  record Refused(SQLException error, long atNanos) { }

  /**
   * How long a refusal stands for the credentials: longer than HikariCP's longest pause between
   * two logins of a pool's adder (5 s), so that an older one means no login was tried since.
   */
  static final long REFUSAL_CURRENT_NANOS = TimeUnit.SECONDS.toNanos(6);

  static final long FIRST_SLICE_MS = 50;
  static final long LAST_SLICE_MS = 2_000;

  /** The slices of the calling thread's wait, for the metrics tracker; reused per thread. */
  private static final ThreadLocal<Slices> SLICES = ThreadLocal.withInitial(Slices::new);

  /** One thread's wait as the metrics tracker must see it. */
  private static final class Slices {
    /** The current slice is not the wait's last: its metrics are held back. */
    boolean holding;
    /** How long the wait had lasted when the current slice began; 0 outside a sliced wait. */
    long offsetNanos;
    /** What HikariCP reported as the current slice's acquire time, and to which tracker. */
    long heldNanos;
    IMetricsTracker heldBy;

    /** The slice lent a session: its acquire time is the whole wait's. */
    void lent() {
      IMetricsTracker t = heldBy;
      if (t != null) t.recordConnectionAcquiredNanos(heldNanos + offsetNanos);
      heldBy = null;
    }
  }

  private PoolWait() { }

  /**
   * A session of {@code pool}, waiting at most {@code timeout}; see the class comment.
   *
   * @throws SQLTransientConnectionException HikariCP's, after {@code timeout} with no session
   * @throws SQLException the refusal, as {@link PgjdbcErrors#refusedLogin} makes it
   */
  static Connection borrow(HikariDataSource pool, Refusals connector, Duration timeout)
      throws SQLException {
    HikariPoolMXBean bean = pool.getHikariPoolMXBean();
    if (!(bean instanceof HikariPool) || pool.isClosed()) return pool.getConnection();
    HikariPool hikari = (HikariPool) bean;
    Slices s = SLICES.get();
    long started = System.nanoTime();
    long deadline = started + timeout.toNanos();
    long slice = FIRST_SLICE_MS;
    try {
      while (true) {
        Refused refused = connector.refused();
        long now = System.nanoTime();
        if (refused != null && now - refused.atNanos() < REFUSAL_CURRENT_NANOS
            && hikari.getIdleConnections() == 0) {
          throw PgjdbcErrors.refusedLogin(refused.error());
        }
        long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - now));
        s.holding = left > slice;
        s.offsetNanos = now - started;
        s.heldBy = null;
        try {
          Connection c = hikari.getConnection(Math.min(slice, left));
          s.lent();
          return c;
        } catch (SQLTransientConnectionException e) {
          if (!s.holding) throw e; // the last slice: reported as any timeout
        }
        slice = Math.min(2 * slice, LAST_SLICE_MS);
      }
    } finally {
      s.holding = false;
      s.offsetNanos = 0;
      s.heldBy = null;
    }
  }

  /** {@code factory}'s trackers, behind one that sees a sliced wait as one; null for none. */
  static MetricsTrackerFactory metrics(MetricsTrackerFactory factory) {
    if (factory == null) return null;
    return (pool, stats) -> new SliceAwareTracker(factory.create(pool, stats));
  }

  /**
   * Passes everything on, except for a slice that is not its wait's last: its acquire time waits
   * for the slice's outcome (a session: the whole wait is reported; none: nothing) and its
   * timeout is not one.
   */
  private static final class SliceAwareTracker implements IMetricsTracker {
    private final IMetricsTracker delegate;

    SliceAwareTracker(IMetricsTracker delegate) {
      this.delegate = delegate;
    }

    @Override
    public void recordConnectionAcquiredNanos(long nanos) {
      Slices s = SLICES.get();
      if (s.holding) {
        s.heldNanos = nanos;
        s.heldBy = delegate;
      } else {
        delegate.recordConnectionAcquiredNanos(nanos + s.offsetNanos);
      }
    }

    @Override
    public void recordConnectionTimeout() {
      if (!SLICES.get().holding) delegate.recordConnectionTimeout();
    }

    @Override
    public void recordConnectionCreatedMillis(long millis) {
      delegate.recordConnectionCreatedMillis(millis);
    }

    @Override
    public void recordConnectionUsageMillis(long millis) {
      delegate.recordConnectionUsageMillis(millis);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}
