package dev.omnium.it.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.lang.management.ManagementFactory;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.jdbc.PgStatement;

/**
 * Open results outlive a change of read binding as long as with pgjdbc; a retry that finds no
 * fallback keeps the conflict; under an application HikariCP pool, network timeouts and
 * concurrent abort/close leave every route protected and every pool whole.
 */
class ReadBindingIT {
  private static final AtomicInteger APPS = new AtomicInteger();
  private static final String SLOW_READ = "SELECT pg_is_in_recovery(), (SELECT count(*) FROM t),"
      + " pg_sleep(3)";
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE t (v int)", "INSERT INTO t SELECT generate_series(1, 100)").build();
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
    cluster.setConflictDelay(cluster.replica(0), Duration.ofMillis(100));
  }

  static String app() {
    return "rb" + APPS.incrementAndGet();
  }

  static String url(String app, String extra) {
    return "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?replica=" + cluster.replica(0).hostPort() + "&applicationName=" + app
        + "&heartbeatInterval=100ms&user=" + cluster.user() + extra;
  }

  static boolean inRecovery(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  /** Reads what an open result set still holds: pgjdbc's answer is the oracle. */
  static List<Integer> readsAfterCommit(Connection c) throws SQLException {
    c.setReadOnly(true);
    c.setAutoCommit(false);
    List<Integer> seen = new ArrayList<>();
    try (Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT generate_series(1, 3)")) {
      assertTrue(rs.next());
      seen.add(rs.getInt(1));
      c.commit();
      while (rs.next()) seen.add(rs.getInt(1));
    }
    try (Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT generate_series(1, 3)")) {
      assertTrue(rs.next());
      seen.add(rs.getInt(1));
      c.setAutoCommit(true);
      while (rs.next()) seen.add(rs.getInt(1));
    }
    return seen;
  }

  /** What a program on a fresh connection sees, on plain pgjdbc and through omnium. */
  @FunctionalInterface
  interface Program<T> {
    T run(Connection c) throws SQLException;
  }

  /** Runs {@code p} on plain pgjdbc, then through omnium: they must agree; pgjdbc's answer. */
  static <T> T assertSameAsPgjdbc(Program<T> p) throws SQLException {
    T pg;
    try (Connection c = cluster.connect(cluster.primary())) {
      pg = p.run(c);
    }
    try (Connection c = DriverManager.getConnection(url(app(), "&maxAge=1h"))) {
      assertEquals(pg, p.run(c));
    }
    return pg;
  }

  @Test
  void aResultSetStaysReadableAfterCommitAndSetAutoCommitAsWithPgjdbc() throws Exception {
    assertSameAsPgjdbc(ReadBindingIT::readsAfterCommit);
  }

  /** A callable statement's OUT value after commit and after another statement: pgjdbc's answer. */
  static List<String> outValuesAfterCommit(Connection c) throws SQLException {
    c.setReadOnly(true);
    c.setAutoCommit(false);
    List<String> seen = new ArrayList<>();
    try (CallableStatement cs = c.prepareCall("{? = call upper(?)}")) {
      cs.registerOutParameter(1, Types.VARCHAR);
      cs.setString(2, "out");
      cs.execute();
      c.commit();
      seen.add(cs.getString(1));
      try (Statement other = c.createStatement();
           ResultSet rs = other.executeQuery("SELECT 1")) {
        rs.next();
      }
      c.commit();
      seen.add(cs.getString(1));
    }
    c.setAutoCommit(true);
    return seen;
  }

  @Test
  void outValuesStayReadableAsLongAsWithPgjdbc() throws Exception {
    assertEquals(List.of("OUT", "OUT"), assertSameAsPgjdbc(ReadBindingIT::outValuesAfterCommit));
  }

  @Test
  void anOpenResultKeepsItsBindingWhileTheNextStatementRoutesElsewhere() throws Exception {
    String app = app();
    try (Connection c = DriverManager.getConnection(url(app, "&maxAge=1s"))) {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(30), "a fresh replica", () -> inRecovery(c));
      replay(true);
      try {
        Poll.until(Duration.ofSeconds(30), "the replica to go stale", () -> !inRecovery(c));
        Statement a = c.createStatement();
        ResultSet ra = a.executeQuery("SELECT pg_is_in_recovery() FROM generate_series(1, 3)");
        assertTrue(ra.next());
        assertFalse(ra.getBoolean(1), "A runs on the fallback");
        resume();
        Poll.until(Duration.ofSeconds(30), "the replica to be fresh again", () -> inRecovery(c));
        assertTrue(ra.next(), "A's results are still readable");
        assertFalse(ra.getBoolean(1));
        assertTrue(ra.next());
        assertFalse(ra.next());
        a.close();
      } finally {
        resume();
      }
    }
  }

  static void resume() throws Exception {
    replay(false);
  }

  /** Pauses or resumes replay; the call itself may meet a recovery conflict here: retried. */
  static void replay(boolean pause) throws Exception {
    Poll.until(Duration.ofSeconds(30), pause ? "replay to pause" : "replay to resume", () -> {
      try {
        if (pause) {
          cluster.pauseReplay(cluster.replica(0));
        } else {
          cluster.resumeReplay(cluster.replica(0));
        }
        return true;
      } catch (RuntimeException conflict) {
        return false;
      }
    });
  }

  @Test
  void holdabilityIsPgjdbcsDefault() throws Exception {
    try (Connection pg = cluster.connect(cluster.primary());
         Connection c = DriverManager.getConnection(url(app(), ""))) {
      assertEquals(pg.getHoldability(), c.getHoldability());
      try (Statement s = c.createStatement(); Statement p = pg.createStatement()) {
        assertEquals(p.getResultSetHoldability(), s.getResultSetHoldability());
      }
    }
  }

  // ------------------------------------------------------------------ defect 10

  @Test
  void aRetryThatFindsNoFallbackKeepsTheRecoveryConflict() throws Exception {
    String app = app();
    try (OmniumDataSource ds = new OmniumDataSource(
        url(app, "&maxAge=1h&fallbackPoolSize=1&poolTimeout=300ms"));
         Connection holder = ds.read();
         Connection c = ds.read()) {
      Poll.until(Duration.ofSeconds(30), "a fresh replica", () -> inRecovery(c));
      // the only fallback connection is taken: serializable reads never run on a standby
      holder.setAutoCommit(false);
      holder.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      try (Statement st = holder.createStatement()) {
        assertFalse(inRecovery(holder), "the holder runs on the fallback");
        Poll.until(Duration.ofSeconds(30), "a fresh replica", () -> inRecovery(c));
        CompletableFuture<SQLException> read = CompletableFuture.supplyAsync(() -> {
          try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(SLOW_READ)) {
            return null;
          } catch (SQLException e) {
            return e;
          }
        });
        truncateWhileTheReplicaReads(app);
        SQLException e = read.get(60, TimeUnit.SECONDS);
        assertNotNull(e, "the conflict reached the caller");
        assertEquals("40001", e.getSQLState(), e.toString());
        assertFalse(e.getMessage().contains("fresh enough"), e.getMessage());
        holder.rollback();
      }
    }
  }

  static void truncateWhileTheReplicaReads(String app) throws Exception {
    Poll.until(Duration.ofSeconds(20), "the slow read on the replica", () -> {
      try (Connection c = cluster.connect(cluster.replica(0)); PreparedStatement ps =
          c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
              + " AND query LIKE '%pg_sleep(3)%' AND state = 'active'")) {
        ps.setString(1, app + ":replica");
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getInt(1) > 0;
        }
      }
    });
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute("TRUNCATE t");
      st.execute("INSERT INTO t SELECT generate_series(1, 100)");
    }
  }

  /** An application HikariCP pool of {@code size} over this url. */
  static HikariDataSource hikari(String app, String extra, int size, long connectionTimeoutMs) {
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(url(app, extra));
    hc.setMaximumPoolSize(size);
    hc.setConnectionTimeout(connectionTimeoutMs);
    return new HikariDataSource(hc);
  }

  // ------------------------------------------------------------------ issue 13, item 2

  @Test
  void hikariRestoringAnUnsetNetworkTimeoutKeepsTheReplicaSocketTimeout() throws Exception {
    try (HikariDataSource pool = hikari(app(), "&maxAge=1h&replicaStatementTimeout=2s", 2, 30_000)) {
      for (int i = 0; i < 3; i++) {
        try (Connection c = pool.getConnection()) {
          c.setReadOnly(true);
          Poll.until(Duration.ofSeconds(30), "a fresh replica", () -> inRecovery(c));
          try (Statement st = c.createStatement();
               ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
            rs.next();
            assertTrue(rs.getBoolean(1));
            int timeout = st.unwrap(PgStatement.class).getConnection().getNetworkTimeout();
            assertTrue(timeout > 0, "the replica session lost its socket timeout: " + timeout);
          }
          c.setReadOnly(false);
        }
      }
    }
  }

  // ------------------------------------------------------------------ issue 13, item 5

  @Test
  void abortAndCloseFromOtherThreadsLeaveEveryPoolWhole() throws Exception {
    String app = app();
    HikariDataSource pool = hikari(app, "&maxAge=1h&replicaPoolSize=4&fallbackPoolSize=2", 6, 2000);
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService workers = Executors.newFixedThreadPool(6);
    List<Future<?>> futures = new ArrayList<>();
    try {
      for (int w = 0; w < 6; w++) {
        int n = w;
        futures.add(workers.submit(() -> {
          while (!stop.get()) {
            try (Connection c = pool.getConnection()) {
              c.setReadOnly(n % 2 == 0);
              try (Statement st = c.createStatement();
                   ResultSet rs = st.executeQuery("SELECT count(*) FROM t")) {
                rs.next();
              }
            } catch (SQLException | RuntimeException expected) {
              // evicted or aborted under us: that is the point
            }
          }
          return null;
        }));
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(4).toNanos();
      while (System.nanoTime() < deadline) {
        pool.getHikariPoolMXBean().softEvictConnections();
        Thread.sleep(20);
      }
    } finally {
      pool.close(); // aborts what is still in use
      stop.set(true);
      workers.shutdown();
      assertTrue(workers.awaitTermination(60, TimeUnit.SECONDS));
    }
    for (Future<?> f : futures) f.get();
    // nothing of this application is left in use on any server, and the internal pools agree
    Poll.until(Duration.ofSeconds(30), "no busy session of " + app, () -> {
      for (var node : List.of(cluster.primary(), cluster.replica(0))) {
        try (Connection c = cluster.connect(node); PreparedStatement ps = c.prepareStatement(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE ?"
                + " AND state <> 'idle'"
                + " AND application_name NOT LIKE '%watcher%'")) {
          ps.setString(1, app + "%");
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (rs.getInt(1) != 0) return false;
          }
        }
      }
      return true;
    });
    Poll.until(Duration.ofSeconds(30), "the internal pools to be idle", () -> {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      for (var n : server.queryNames(new ObjectName("com.zaxxer.hikari:type=Pool *"),
          null)) {
        if (!n.toString().contains("(" + app + "-")) continue;
        if ((Integer) server.getAttribute(n, "ActiveConnections") != 0) return false;
      }
      return true;
    });
  }
}
