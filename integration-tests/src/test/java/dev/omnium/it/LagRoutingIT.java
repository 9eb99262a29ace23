package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Sessions;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Real replica lag (replay paused): reads move to the capped fallback pool and come back. */
class LagRoutingIT {
  private static final AtomicInteger APPS = new AtomicInteger();
  private static final Duration MAX_AGE = Duration.ofSeconds(1);
  private static final Duration INTERVAL = Duration.ofMillis(200);
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).healAfterEach()
      .sql("CREATE TABLE items (id int PRIMARY KEY, name text)").build();

  static String url(String app, String extra) {
    return SANDBOX.url(app, "maxAge=" + MAX_AGE.toMillis() + "ms&heartbeatInterval="
        + INTERVAL.toMillis() + "ms" + (extra == null ? "" : "&" + extra));
  }

  static Where read(Connection c) throws SQLException {
    c.setReadOnly(true);
    return Where.of(c);
  }

  /** Waits until {@code c} reads on a fresh replica, then pauses the replica's replay. */
  static void pauseReplayOnceFresh(Connection c) throws Exception {
    Poll.until(Duration.ofSeconds(10), "a fresh replica", () -> read(c).inRecovery());
    SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
  }

  @Test
  void pausedReplayMovesReadsToTheFallbackWithinMaxAgeAndBack() throws Exception {
    String app = "lag" + APPS.incrementAndGet();
    try (Connection c = DriverManager.getConnection(url(app, null))) {
      pauseReplayOnceFresh(c);
      Duration moved = Poll.until(Duration.ofSeconds(10), "reads to leave the paused replica",
          () -> !read(c).inRecovery());
      Where w = read(c);
      assertEquals(app + ":fallback", w.applicationName());
      assertEquals(SANDBOX.primary().port(), w.port());
      // effective lag crosses maxAge within one heartbeat interval of the pause; allow two plus scheduling
      long bound = MAX_AGE.toMillis() + 2 * INTERVAL.toMillis() + 1000;
      assertTrue(moved.toMillis() <= bound, "reads moved after " + moved.toMillis() + " ms, bound " + bound);

      SANDBOX.cluster().resumeReplay(SANDBOX.replica(0));
      Poll.until(Duration.ofSeconds(10), "reads to return to the replica", () -> read(c).inRecovery());
      assertEquals(app + ":replica", read(c).applicationName());
    }
  }

  @Test
  void staleReadsNeverHoldMoreThanFallbackPoolSizeSessionsOnThePrimary() throws Exception {
    String app = "lag" + APPS.incrementAndGet();
    int cap = 3;
    String url = url(app, "fallbackPoolSize=" + cap + "&poolTimeout=30s");
    try (Connection probe = DriverManager.getConnection(url)) {
      pauseReplayOnceFresh(probe);
      Poll.until(Duration.ofSeconds(10), "the replica to go stale", () -> !read(probe).inRecovery());
    }
    AtomicBoolean sampling = new AtomicBoolean(true);
    AtomicInteger maxSeen = new AtomicInteger();
    Thread sampler = new Thread(() -> {
      while (sampling.get()) {
        try {
          maxSeen.accumulateAndGet(Sessions.count(SANDBOX.cluster(), SANDBOX.primary(), app + ":fallback"), Math::max);
        } catch (SQLException e) {
          // next sample
        }
      }
    });
    sampler.start();
    int threads = 12;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<List<Where>>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        results.add(pool.submit(() -> {
          List<Where> seen = new ArrayList<>();
          try (Connection c = DriverManager.getConnection(url)) {
            c.setReadOnly(true);
            for (int i = 0; i < 3; i++) {
              try (PreparedStatement ps = c.prepareStatement(Where.SQL + ", pg_sleep(0.1)");
                   ResultSet rs = ps.executeQuery()) {
                rs.next();
                seen.add(Where.from(rs));
              }
            }
          }
          return seen;
        }));
      }
      int reads = 0;
      for (Future<List<Where>> f : results) {
        for (Where w : f.get()) {
          reads++;
          assertFalse(w.inRecovery());
          assertEquals(app + ":fallback", w.applicationName());
        }
      }
      assertEquals(threads * 3, reads, "every stale read succeeded");
    } finally {
      pool.shutdownNow();
      sampling.set(false);
      sampler.join();
    }
    assertTrue(maxSeen.get() <= cap, "primary held " + maxSeen.get() + " fallback sessions, cap " + cap);
    assertTrue(maxSeen.get() >= 1, "the sampler saw the fallback sessions at work");
  }

  @Test
  void idleReadOnlyConnectionsDoNotPinFallbackConnections() throws Exception {
    String app = "lag" + APPS.incrementAndGet();
    String url = url(app, "fallbackPoolSize=2&poolTimeout=2s");
    List<Connection> open = new ArrayList<>();
    try {
      Connection probe = DriverManager.getConnection(url);
      open.add(probe);
      pauseReplayOnceFresh(probe);
      Poll.until(Duration.ofSeconds(10), "the replica to go stale", () -> !read(probe).inRecovery());
      // Ten read-only autocommit connections held open by the application (as an idle pool would),
      // each having run and closed a statement: none may keep one of the two fallback connections.
      for (int i = 0; i < 10; i++) {
        Connection c = DriverManager.getConnection(url);
        open.add(c);
        Where w = read(c);
        assertEquals(app + ":fallback", w.applicationName());
      }
      assertTrue(Sessions.count(SANDBOX.cluster(), SANDBOX.primary(), app + ":fallback") <= 2);
    } finally {
      for (Connection c : open) c.close();
    }
  }

  @Test
  void aPreparedStatementMovesWithTheRouteAndKeepsItsParameters() throws Exception {
    String app = "lag" + APPS.incrementAndGet();
    try (Connection c = DriverManager.getConnection(url(app, null))) {
      Poll.until(Duration.ofSeconds(10), "a fresh replica", () -> read(c).inRecovery());
      c.setReadOnly(true);
      PreparedStatement ps = c.prepareStatement("SELECT ?::text || '!', pg_is_in_recovery()");
      ps.setString(1, "kept");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertEquals("kept!", rs.getString(1));
        assertTrue(rs.getBoolean(2));
      }
      SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
      Poll.until(Duration.ofSeconds(10), "the statement to run on the fallback route", () -> {
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertEquals("kept!", rs.getString(1));
          return !rs.getBoolean(2);
        }
      });
    }
  }

  @Test
  void writesInsideAReadOnlyTransactionFailWith25006OnTheFallbackRoute() throws Exception {
    String app = "lag" + APPS.incrementAndGet();
    try (Connection c = DriverManager.getConnection(url(app, null))) {
      pauseReplayOnceFresh(c);
      Poll.until(Duration.ofSeconds(10), "the replica to go stale", () -> !read(c).inRecovery());
      c.setAutoCommit(false);
      Where w = Where.of(c);
      assertEquals(app + ":fallback", w.applicationName());
      SQLException e = org.junit.jupiter.api.Assertions.assertThrows(SQLException.class, () -> {
        try (Statement st = c.createStatement()) {
          st.executeUpdate("INSERT INTO items VALUES (1, 'nope')");
        }
      });
      assertEquals("25006", e.getSQLState());
      c.rollback();
    }
  }
}
