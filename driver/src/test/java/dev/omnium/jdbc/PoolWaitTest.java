package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.IMetricsTracker;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.metrics.PoolStats;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * A wait for a pooled session ends at once when the pool's logins are refused, with pgjdbc's error
 * for the refusal; a server that does not let a session open costs the whole timeout; and
 * HikariCP's meters see one wait (one timeout, its whole acquire time), however many slices it
 * was cut into. HikariCP pools over stub data sources: no server.
 */
class PoolWaitTest {
  /** What HikariCP reported to the metrics tracker. */
  static final class Recorded implements MetricsTrackerFactory {
    final List<Long> acquiredNanos = new CopyOnWriteArrayList<>();
    final AtomicInteger timeouts = new AtomicInteger();

    @Override
    public IMetricsTracker create(String pool, PoolStats stats) {
      return new IMetricsTracker() {
        @Override public void recordConnectionAcquiredNanos(long nanos) {
          acquiredNanos.add(nanos);
        }

        @Override public void recordConnectionTimeout() {
          timeouts.incrementAndGet();
        }
      };
    }
  }

  /** A data source whose every login fails with {@code failure}. */
  static DataSource failing(SQLException failure, AtomicInteger attempts) {
    return new StubSessions.DataSourceBase() {
      @Override public Connection getConnection() throws SQLException {
        attempts.incrementAndGet();
        throw failure;
      }
    };
  }

  static HikariDataSource pool(String name, DataSource source, Recorded metrics) {
    HikariConfig hc = new HikariConfig();
    hc.setPoolName(name);
    hc.setMaximumPoolSize(2);
    hc.setMinimumIdle(0);
    hc.setConnectionTimeout(10_000);
    hc.setInitializationFailTimeout(-1);
    hc.setDataSource(source);
    hc.setMetricsTrackerFactory(PoolWait.metrics(metrics));
    return new HikariDataSource(hc);
  }

  @Test
  void aRefusedLoginEndsTheWaitAtOnceWithPgjdbcsError() throws Exception {
    PSQLException refusal = CredentialProofsTest.refusal("28P01",
        "password authentication failed for user \"u\"");
    AtomicInteger attempts = new AtomicInteger();
    Recorded metrics = new Recorded();
    try (HikariDataSource pool = pool("refused", failing(refusal, attempts), metrics)) {
      // the connector saw the same refusal the pool's adder gets
      PoolWait.Refusals connector = () -> attempts.get() > 0
          ? new PoolWait.Refused(refusal, System.nanoTime()) : null;
      long t0 = System.nanoTime();
      SQLException e = assertThrows(SQLException.class,
          () -> PoolWait.borrow(pool, connector, Duration.ofSeconds(10)));
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(ms < 2_000, "a refusal ends the wait at once, not after 10 s: " + ms + " ms");
      assertEquals(PSQLException.class, e.getClass());
      assertEquals("28P01", e.getSQLState());
      assertEquals(refusal.getMessage(), e.getMessage());
      assertSame(refusal, e.getCause());
      assertEquals(0, metrics.timeouts.get(), "a slice that ended empty is no timeout");
    }
  }

  /**
   * A refusal older than HikariCP's longest pause between two logins of its adder: no login has
   * been tried since (a pool that keeps nothing idle stops trying when nobody waits), so it says
   * nothing about the credentials now. The wait asks for a login instead of failing with it.
   */
  @Test
  void aRefusalNoLoginFollowedSinceDoesNotEndTheWait() throws Exception {
    PSQLException refusal = CredentialProofsTest.refusal("28P01",
        "password authentication failed for user \"u\"");
    AtomicInteger opened = new AtomicInteger();
    DataSource accepting = new StubSessions.DataSourceBase() {
      @Override public Connection getConnection() {
        opened.incrementAndGet();
        return StubSessions.session().connection; // the password was put back meanwhile
      }
    };
    try (HikariDataSource pool = pool("stale", accepting, new Recorded())) {
      long refusedAt = System.nanoTime() - PoolWait.REFUSAL_CURRENT_NANOS - 1;
      PoolWait.Refusals connector = () -> opened.get() == 0
          ? new PoolWait.Refused(refusal, refusedAt) : null;
      Connection c = PoolWait.borrow(pool, connector, Duration.ofSeconds(10));
      assertNotNull(c);
      assertEquals(1, opened.get());
      c.close();
    }
    // while a refusal is current, the wait still ends at once with it (above, and here)
    try (HikariDataSource pool = pool("current", accepting, new Recorded())) {
      long refusedAt = System.nanoTime();
      PoolWait.Refusals connector = () -> new PoolWait.Refused(refusal, refusedAt);
      assertThrows(PSQLException.class,
          () -> PoolWait.borrow(pool, connector, Duration.ofSeconds(10)));
    }
  }

  @Test
  void aServerThatLetsNoSessionOpenCostsTheTimeoutCountedOnce() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    SQLException down = new PSQLException("Connection to 127.0.0.1:9 refused.",
        PSQLState.CONNECTION_UNABLE_TO_CONNECT);
    Recorded metrics = new Recorded();
    try (HikariDataSource pool = pool("down", failing(down, attempts), metrics)) {
      PoolWait.Refusals connector = () -> null; // down is not refused: it may come back
      long t0 = System.nanoTime();
      assertThrows(SQLTransientConnectionException.class,
          () -> PoolWait.borrow(pool, connector, Duration.ofMillis(900)));
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(ms >= 850, "waited the timeout: " + ms + " ms");
      assertEquals(1, metrics.timeouts.get(), "one wait, one timeout, however many slices");
      assertEquals(1, metrics.acquiredNanos.size(), metrics.acquiredNanos.toString());
      assertTrue(TimeUnit.NANOSECONDS.toMillis(metrics.acquiredNanos.get(0)) >= 800,
          "the acquire time of the whole wait: " + metrics.acquiredNanos);
    }
  }

  @Test
  void anIdleSessionIsLentAtOnceAndALateOneCountsTheWholeWait() throws Exception {
    AtomicInteger opened = new AtomicInteger();
    long slowMillis = 300;
    DataSource slow = new StubSessions.DataSourceBase() {
      @Override public Connection getConnection() throws SQLException {
        if (opened.incrementAndGet() > 0) {
          try {
            Thread.sleep(slowMillis); // a slow login: longer than the first slices
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return StubSessions.session().connection;
      }
    };
    Recorded metrics = new Recorded();
    try (HikariDataSource pool = pool("slow", slow, metrics)) {
      PoolWait.Refusals connector = () -> null;
      Connection first = PoolWait.borrow(pool, connector, Duration.ofSeconds(10));
      assertNotNull(first);
      assertEquals(0, metrics.timeouts.get());
      assertEquals(1, metrics.acquiredNanos.size());
      assertTrue(TimeUnit.NANOSECONDS.toMillis(metrics.acquiredNanos.get(0)) >= slowMillis - 50,
          "the whole wait, not its last slice: " + metrics.acquiredNanos);
      first.close();
      Connection again = PoolWait.borrow(pool, connector, Duration.ofSeconds(10));
      assertTrue(TimeUnit.NANOSECONDS.toMillis(metrics.acquiredNanos.get(1)) < slowMillis,
          "an idle session: no wait");
      again.close();
    }
  }
}
