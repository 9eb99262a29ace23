package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.jdbc.RouterMXBean;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.JMX;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Suite 3: with the replica stale (replay paused) or dead (stopped), 50 reader threads never make
 * the primary hold more than fallbackPoolSize fallback sessions (sampled from pg_stat_activity the
 * whole time); readers beyond the cap wait poolTimeout and get a clear
 * SQLTransientConnectionException; a writer on the same router keeps committing throughout.
 */
@ExtendWith(LogScanned.class)
class PrimaryProtectionIT {
  static final int READERS = 50;
  static final int CAP = 3;
  static final Duration POOL_TIMEOUT = Duration.ofSeconds(1);
  /** Long reads, so that most of the 50 readers must wait and time out. */
  static final String READ = "SELECT pg_is_in_recovery(), current_setting('application_name'), pg_sleep(0.6)";
  static final Duration LOAD = Duration.ofSeconds(5);
  /** Scheduling margin on the loaded 2-core CI machine (see ReplicaFaultsIT). */
  static final long MARGIN_MS = 1500;

  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(1).healAfterEach()
      .sql("CREATE TABLE writes (id bigserial PRIMARY KEY, at timestamptz DEFAULT now())").build();

  static String url(String app) {
    return SANDBOX.url(app, "maxAge=1s&heartbeatInterval=100ms&fallbackPoolSize=" + CAP
        + "&poolTimeout=" + POOL_TIMEOUT.toMillis() + "ms&primaryPoolSize=2");
  }

  interface Source {
    Connection open() throws SQLException;
  }

  /**
   * DataSource mode: with every primaryPoolSize session held by a transaction, one more writer
   * waits poolTimeout and fails with class 08 naming the key (HikariCP alone gives no SQLState
   * when no attempt failed), and the primary never holds more than primaryPoolSize sessions.
   */
  @Test
  void aFullPrimaryPoolTimesOutWithClass08NamingTheKey() throws Exception {
    String app = "protectfull";
    try (OmniumDataSource db = new OmniumDataSource(url(app))) {
      List<Connection> held = new ArrayList<>();
      try {
        for (int i = 0; i < 2; i++) { // primaryPoolSize=2
          Connection c = db.getConnection();
          held.add(c);
          c.setAutoCommit(false);
          try (Statement st = c.createStatement()) {
            st.executeUpdate("INSERT INTO writes DEFAULT VALUES");
          }
        }
        try (Connection extra = db.getConnection(); Statement st = extra.createStatement()) {
          SQLTransientConnectionException e = assertThrows(SQLTransientConnectionException.class,
              () -> st.executeUpdate("INSERT INTO writes DEFAULT VALUES"));
          assertEquals("08001", e.getSQLState(), e.toString());
          assertTrue(e.getMessage().contains("all 2 (primaryPoolSize) are in use")
              && e.getMessage().contains("poolTimeout (" + POOL_TIMEOUT.toMillis() + " ms)"),
              e.getMessage());
        }
        assertEquals(2, primarySessions(app), "the primary's own count of the pool's sessions");
      } finally {
        for (Connection c : held) c.close();
      }
    }
  }

  private static long primarySessions(String applicationName) throws SQLException {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary());
         PreparedStatement ps = c.prepareStatement(
             "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")) {
      ps.setString(1, applicationName);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @Test
  void staleReplicaDriverMode() throws Exception {
    String app = "protectstale";
    String url = url(app);
    try (Connection probe = Readers.openFresh(url)) {
      SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
      Poll.until(Duration.ofSeconds(15), "the replica to go stale", () -> !Where.of(probe).inRecovery());
    }
    load(app, () -> DriverManager.getConnection(url), () -> DriverManager.getConnection(url), "stale");
  }

  @Test
  void deadReplicaDataSourceMode() throws Exception {
    String app = "protectdead";
    try (OmniumDataSource db = new OmniumDataSource(url(app))) {
      try (Connection probe = db.read()) {
        Poll.until(Duration.ofSeconds(15), "a fresh replica", () -> Where.of(probe).inRecovery());
      }
      SANDBOX.cluster().stop(SANDBOX.replica(0), true);
      Poll.until(Duration.ofSeconds(15), "the watcher to see the replica down",
          () -> !"OK".equals(db.metrics().getReplicaStates().values().iterator().next()));
      load(app, db::read, db::write, "dead");
    }
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
  }

  private void load(String app, Source readers, Source writers, String what) throws Exception {
    AtomicInteger served = new AtomicInteger();
    AtomicInteger onReplica = new AtomicInteger();
    AtomicInteger timeouts = new AtomicInteger();
    List<String> badTimeouts = Collections.synchronizedList(new ArrayList<>());
    List<String> otherErrors = Collections.synchronizedList(new ArrayList<>());
    AtomicLong shortestTimeoutWait = new AtomicLong(Long.MAX_VALUE);
    AtomicLong longestTimeoutWait = new AtomicLong();
    AtomicInteger maxFallbackActive = new AtomicInteger();
    AtomicInteger commits = new AtomicInteger();
    AtomicLong longestWriteGap = new AtomicLong();
    List<String> writeErrors = Collections.synchronizedList(new ArrayList<>());
    RouterMXBean bean = RouterBean.of(app);

    CountDownLatch go = new CountDownLatch(1);
    long[] end = new long[1];
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < READERS; i++) {
      threads.add(new Thread(() -> {
        try (Connection c = readers.open()) {
          c.setReadOnly(true);
          go.await();
          while (System.nanoTime() < end[0]) {
            long begin = System.nanoTime();
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(READ)) {
              rs.next();
              served.incrementAndGet();
              if (rs.getBoolean(1) || !rs.getString(2).equals(app + ":fallback")) onReplica.incrementAndGet();
            } catch (SQLException e) {
              long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin);
              if (e instanceof SQLTransientConnectionException) {
                timeouts.incrementAndGet();
                shortestTimeoutWait.accumulateAndGet(waited, Math::min);
                longestTimeoutWait.accumulateAndGet(waited, Math::max);
                String m = String.valueOf(e.getMessage());
                if (!m.contains("fallbackPoolSize") || !m.contains("poolTimeout") || e.getSQLState() == null) {
                  badTimeouts.add(e.getSQLState() + " " + m);
                }
              } else {
                otherErrors.add(e.getClass().getSimpleName() + " " + e.getSQLState() + " " + e.getMessage());
              }
            }
          }
        } catch (Exception e) {
          otherErrors.add("reader died: " + e);
        }
      }, app + "-test-reader-" + i));
    }
    boolean connectionPerWrite = what.equals("dead"); // DataSource mode: db.write() per unit of work
    Thread writer = new Thread(() -> {
      try {
        go.await();
        long last = System.nanoTime();
        Connection held = connectionPerWrite ? null : writers.open();
        while (System.nanoTime() < end[0]) {
          Connection c = connectionPerWrite ? writers.open() : held;
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO writes DEFAULT VALUES")) {
            ps.executeUpdate();
            long now = System.nanoTime();
            commits.incrementAndGet();
            longestWriteGap.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(now - last), Math::max);
            last = now;
          } catch (SQLException e) {
            writeErrors.add(e.getSQLState() + " " + e.getMessage());
          } finally {
            if (connectionPerWrite) c.close();
          }
          Thread.sleep(50);
        }
        if (held != null) held.close();
      } catch (Exception e) {
        writeErrors.add("writer died: " + e);
      }
    }, app + "-test-writer");
    threads.add(writer);
    for (Thread t : threads) t.start();

    try (ActivitySampler primary = new ActivitySampler(SANDBOX.cluster(), SANDBOX.primary(), app + ":fallback", app)) {
      end[0] = System.nanoTime() + LOAD.toNanos();
      go.countDown();
      while (System.nanoTime() < end[0]) {
        maxFallbackActive.accumulateAndGet(bean.getFallbackActive(), Math::max);
        Thread.sleep(5);
      }
      List<String> stuck = new ArrayList<>();
      for (Thread t : threads) {
        t.join(POOL_TIMEOUT.toMillis() + 10_000);
        if (t.isAlive()) stuck.add(t.getName());
      }
      primary.close();
      new Figures("primary-protection-" + what)
          .put("readers", READERS)
          .put("fallbackPoolSize", CAP)
          .put("poolTimeoutMs", POOL_TIMEOUT.toMillis())
          .put("served", served.get())
          .put("timeouts", timeouts.get())
          .put("otherErrors", otherErrors.size())
          .put("timeoutWaitMs", shortestTimeoutWait.get() == Long.MAX_VALUE ? "-"
              : shortestTimeoutWait.get() + ".." + longestTimeoutWait.get())
          .put("maxFallbackSessionsOnPrimary", primary.max(app + ":fallback"))
          .put("maxPrimarySessions", primary.max(app))
          .put("maxFallbackActiveJmx", maxFallbackActive.get())
          .put("samples", primary.samples())
          .put("commits", commits.get())
          .put("longestWriteGapMs", longestWriteGap.get())
          .put("writeErrors", writeErrors.size())
          .report();

      assertTrue(stuck.isEmpty(), "threads stuck: " + stuck);
      assertTrue(primary.samples() >= 50, "too few pg_stat_activity samples: " + primary.samples());
      assertTrue(primary.max(app + ":fallback") <= CAP, "the primary held " + primary.max(app + ":fallback")
          + " fallback sessions of " + app + ", fallbackPoolSize " + CAP);
      assertTrue(primary.max(app + ":fallback") >= 1, "the sampler never saw a fallback session at work");
      assertTrue(maxFallbackActive.get() <= CAP, "JMX FallbackActive reached " + maxFallbackActive.get());
      assertTrue(otherErrors.isEmpty(), "readers failed otherwise than by a pool timeout: "
          + otherErrors.subList(0, Math.min(5, otherErrors.size())));
      assertEquals(0, onReplica.get(), "reads ran on the " + what + " replica");
      assertTrue(served.get() > 0, "no read was served");
      assertTrue(timeouts.get() > 0, "no reader had to wait beyond the cap: the test proves nothing");
      assertTrue(badTimeouts.isEmpty(), "unclear pool timeouts (the message must name fallbackPoolSize and"
          + " poolTimeout): " + badTimeouts.subList(0, Math.min(3, badTimeouts.size())));
      assertTrue(shortestTimeoutWait.get() >= POOL_TIMEOUT.toMillis() - 50,
          "a reader gave up after " + shortestTimeoutWait.get() + " ms, before poolTimeout");
      assertTrue(longestTimeoutWait.get() <= POOL_TIMEOUT.toMillis() + MARGIN_MS,
          "a reader waited " + longestTimeoutWait.get() + " ms for a fallback connection, poolTimeout "
              + POOL_TIMEOUT.toMillis() + " ms + margin " + MARGIN_MS + " ms");
      assertTrue(writeErrors.isEmpty(), "writes failed while the readers were capped: " + writeErrors);
      assertTrue(commits.get() >= 20, "the writer committed only " + commits.get() + " times in " + LOAD);
      assertTrue(longestWriteGap.get() <= POOL_TIMEOUT.toMillis() + MARGIN_MS,
          "the writer stalled " + longestWriteGap.get() + " ms between commits");
    }
    Leaks.assertQuiescent(SANDBOX.cluster(), app);
    if (what.equals("stale")) {
      OmniumDriver.shutdown();
      Leaks.assertGone(SANDBOX.cluster(), app);
    }
  }
}
