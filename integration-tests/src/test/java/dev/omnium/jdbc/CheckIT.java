package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.Json;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code check}: exit status and report against a real primary + replica, with passwords required
 * (so every output is also checked for the password). In package {@code dev.omnium.jdbc} because
 * {@link HealthCheck} is package-private. The primary is stopped by the last test.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CheckIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).requirePasswords()
      .sql("CREATE TABLE check_items (id int PRIMARY KEY, name text)",
          "INSERT INTO check_items SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g")
      .build();

  static String url(String replicas, String extra) {
    return SANDBOX.primaryUrl("checkit", "replica=" + replicas + "&maxAge=1s"
        + (extra == null ? "" : "&" + extra));
  }

  static String url() {
    return url(SANDBOX.replica(0).hostPort(), null);
  }

  /** Exit status and everything printed. */
  record Result(int exit, String out) { }

  static Result check(String url, boolean json) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    int exit = HealthCheck.run(url, new Properties(), json, ps);
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertFalse(out.contains(SANDBOX.cluster().password()), "the password leaked:\n" + out);
    return new Result(exit, out);
  }

  @Test
  @Order(1)
  void healthyClusterExitsZeroAndReportsBothServers() throws Exception {
    // A session holding the writer's advisory lock, as the heartbeat writer does.
    Properties p = new Properties();
    p.setProperty("ApplicationName", "checkit-writer");
    try (Connection writer = SANDBOX.cluster().connect(SANDBOX.primary(), p); Statement st = writer.createStatement()) {
      long key = HeartbeatWriter.lockKey("replica_heartbeat");
      try (ResultSet rs = st.executeQuery("SELECT pg_try_advisory_lock(" + key + "), pg_backend_pid()")) {
        rs.next();
        assertTrue(rs.getBoolean(1));
        int writerPid = rs.getInt(2);
        Result r = check(url(), false);
        System.out.println("---- check, healthy cluster (PostgreSQL " + SANDBOX.cluster().version() + ") ----");
        System.out.println(r.out());
        assertEquals(0, r.exit(), r.out());
        String out = r.out();
        assertTrue(out.startsWith("omnium check: HEALTHY (exit 0)"), out);
        assertTrue(out.contains(SANDBOX.primary().hostPort()), out);
        assertTrue(out.contains(SANDBOX.replica(0).hostPort()), out);
        assertTrue(out.contains("(fresh)"), out);
        assertTrue(out.contains("streaming"), out);
        assertTrue(out.contains("held by pid " + writerPid + " (checkit-writer"), out);
        assertTrue(out.contains("read on replica1 " + SANDBOX.replica(0).hostPort()), out);
        assertTrue(out.contains("public.check_items"), out);
        assertTrue(out.contains("password=***"), "the URL is echoed masked:\n" + out);
        assertFalse(out.contains("DEGRADED") || out.contains("FAILED"), out);
      }
    }
  }

  @Test
  @Order(2)
  void jsonParsesAndHoldsTheReplicaWithItsLag() {
    Result r = check(url(), true);
    assertEquals(0, r.exit(), r.out());
    @SuppressWarnings("unchecked")
    Map<String, Object> root = (Map<String, Object>) Json.parse(r.out());
    assertEquals("healthy", root.get("status"));
    assertEquals(0.0, root.get("exitCode"));
    assertEquals(List.of(), root.get("problems"));
    Map<?, ?> primary = (Map<?, ?>) root.get("primary");
    assertEquals(true, primary.get("reachable"));
    assertEquals(false, primary.get("inRecovery"));
    assertEquals(SANDBOX.primary().hostPort(), primary.get("endpoint"));
    Map<?, ?> hb = (Map<?, ?>) primary.get("heartbeat");
    assertEquals(true, hb.get("fresh"));
    List<?> replication = (List<?>) primary.get("replication");
    assertEquals(1, replication.size(), "one standby in pg_stat_replication");
    assertEquals("streaming", ((Map<?, ?>) replication.get(0)).get("state"));
    List<?> replicas = (List<?>) root.get("replicas");
    assertEquals(1, replicas.size());
    Map<?, ?> replica = (Map<?, ?>) replicas.get(0);
    assertEquals(SANDBOX.replica(0).hostPort(), replica.get("endpoint"));
    assertEquals(true, replica.get("inRecovery"));
    assertEquals(true, replica.get("fresh"));
    Object lag = replica.get("lagSeconds");
    assertInstanceOf(Double.class, lag, r.out());
    assertTrue((Double) lag >= 0 && (Double) lag <= 1.0, "lag " + lag);
    Map<?, ?> tables = (Map<?, ?>) root.get("largestTables");
    assertEquals("replica1", tables.get("server"));
    assertFalse(((List<?>) tables.get("tables")).isEmpty());
    assertNotNull(primary.get("connections"));
  }

  @Test
  @Order(3)
  void idleTransactionsAndLockWaitsAreListedWithTheBlocker() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection holder = SANDBOX.cluster().connect(SANDBOX.primary());
         Connection waiter = SANDBOX.cluster().connect(SANDBOX.primary());
         Statement hs = holder.createStatement()) {
      int holderPid;
      try (ResultSet rs = hs.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        holderPid = rs.getInt(1);
      }
      holder.setAutoCommit(false);
      hs.execute("LOCK TABLE check_items IN ACCESS EXCLUSIVE MODE");
      hs.execute("SELECT 'a password-like literal' AS x"); // the last query: hidden in the report
      Future<?> blocked = pool.submit(() -> {
        try (Statement ws = waiter.createStatement()) {
          ws.executeQuery("SELECT count(*) FROM check_items").close();
        }
        return null;
      });
      Poll.until(Duration.ofSeconds(10), "the waiter to block",
          () -> !((List<?>) ((Map<?, ?>) ((Map<?, ?>) Json.parse(check(url(), true).out()))
              .get("primary")).get("lockWaits")).isEmpty());
      Result r = check(url(), false);
      assertEquals(0, r.exit(), "lock waits are reported, not degraded:\n" + r.out());
      String out = r.out();
      assertTrue(out.contains("NOTE     primary " + SANDBOX.primary().hostPort() + ": 1 session waits for a lock"), out);
      assertTrue(out.contains("idle in transaction"), out);
      assertTrue(out.contains(HealthTable.QUERY_HIDDEN), out);
      assertFalse(out.contains("password-like literal"), out);
      String waits = section(out, "lock waits");
      assertTrue(waits.contains("AccessShareLock") && waits.contains("check_items")
          && waits.contains(" " + holderPid + " "), waits);
      // The exclusively locked table is skipped by the sizing query instead of stalling the report.
      assertFalse(section(out, "largest tables").contains("check_items"), out);
      holder.rollback();
      blocked.get();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  @Order(4)
  void anInvalidUrlExitsTwoWithTheReason() {
    Result r = check(url(SANDBOX.replica(0).hostPort(), "maxAge=soon"), false);
    assertEquals(2, r.exit(), r.out());
    assertTrue(r.out().startsWith("omnium check: FAILED (exit 2)\n  FAILED   cannot check: "), r.out());
    assertTrue(r.out().contains("maxAge"), r.out());
    Map<?, ?> root = (Map<?, ?>) Json.parse(check(url(SANDBOX.replica(0).hostPort(), "maxAge=soon"), true).out());
    assertEquals("failed", root.get("status"));
  }

  @Test
  @Order(4)
  void missingHeartbeatTableIsDegraded() {
    Result r = check(url(SANDBOX.replica(0).hostPort(), "heartbeatTable=no_such_heartbeat"), false);
    assertEquals(1, r.exit(), r.out());
    assertTrue(r.out().contains("DEGRADED primary " + SANDBOX.primary().hostPort()
        + ": no heartbeat table no_such_heartbeat"), r.out());
    assertTrue(r.out().contains("DEGRADED replica1 " + SANDBOX.replica(0).hostPort()
        + ": no heartbeat table no_such_heartbeat on the replica"), r.out());
  }

  @Test
  @Order(5)
  void aListedReplicaThatIsThePrimaryIsAnExpectedRole() {
    // Every node in both lists (Patroni-style): the one not in recovery is the primary, a note.
    Result r = check(url(SANDBOX.replica(0).hostPort() + "," + SANDBOX.primary().hostPort(), null), false);
    assertEquals(0, r.exit(), r.out());
    assertTrue(r.out().contains("NOTE     replica2 " + SANDBOX.primary().hostPort()
        + ": is the primary now"), r.out());
  }

  @Test
  @Order(6)
  void anUnreachableReplicaIsDegradedAndCostsLittle() throws Exception {
    int dead;
    try (ServerSocket s = new ServerSocket(0)) {
      dead = s.getLocalPort();
    }
    long start = System.nanoTime();
    Result r = check(url(SANDBOX.replica(0).hostPort() + ",127.0.0.1:" + dead, null), false);
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertEquals(1, r.exit(), r.out());
    assertTrue(r.out().contains("DEGRADED replica2 127.0.0.1:" + dead + ": replica unreachable: "), r.out());
    assertTrue(ms < 8000, "took " + ms + " ms");
  }

  @Test
  @Order(7)
  void pausedReplayOverMaxAgeIsDegraded() throws Exception {
    SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
    try {
      Poll.until(Duration.ofSeconds(15), "check to report degraded", () -> check(url(), false).exit() == 1);
      Result r = check(url(), false);
      System.out.println("---- check, replay paused (PostgreSQL " + SANDBOX.cluster().version() + ") ----");
      System.out.println(r.out());
      assertEquals(1, r.exit(), r.out());
      assertTrue(r.out().contains("DEGRADED replica1 " + SANDBOX.replica(0).hostPort() + ": heartbeat lag "), r.out());
      assertTrue(r.out().contains("is over maxAge 1s (WAL replay is paused)"), r.out());
      assertTrue(r.out().contains("(stale)"), r.out());
      // heavy queries leave the stale replica
      assertTrue(r.out().contains("read on primary " + SANDBOX.primary().hostPort() + ": no fresh replica"), r.out());

      Map<?, ?> root = (Map<?, ?>) Json.parse(check(url(), true).out());
      assertEquals("degraded", root.get("status"));
      Map<?, ?> replica = (Map<?, ?>) ((List<?>) root.get("replicas")).get(0);
      assertEquals(false, replica.get("fresh"));
      assertEquals(true, replica.get("replayPaused"));
      // the clock-free measure waits at most maxAge: then it says "more than lagSeconds"
      assertTrue((Double) replica.get("lagSeconds") > 1.0
          || (Double) replica.get("lagSeconds") >= 1.0
          && Boolean.TRUE.equals(replica.get("lagOverSeconds")), String.valueOf(replica));
    } finally {
      SANDBOX.cluster().resumeReplay(SANDBOX.replica(0));
      SANDBOX.cluster().awaitCaughtUp(SANDBOX.replica(0));
    }
    Poll.until(Duration.ofSeconds(10), "check to be healthy again", () -> check(url(), false).exit() == 0);
  }

  @Test
  @Order(Integer.MAX_VALUE) // stops the primary: last
  void primaryDownExitsTwo() throws Exception {
    SANDBOX.cluster().stop(SANDBOX.primary(), true);
    long start = System.nanoTime();
    Result r = check(url(), false);
    long ms = (System.nanoTime() - start) / 1_000_000;
    System.out.println("---- check, primary stopped (PostgreSQL " + SANDBOX.cluster().version() + ") ----");
    System.out.println(r.out());
    assertEquals(2, r.exit(), r.out());
    assertTrue(r.out().startsWith("omnium check: PRIMARY UNREACHABLE (exit 2)"), r.out());
    assertTrue(r.out().contains("FAILED   primary " + SANDBOX.primary().hostPort() + ": cannot reach the primary: "), r.out());
    assertTrue(ms < 8000, "took " + ms + " ms");
    Map<?, ?> root = (Map<?, ?>) Json.parse(check(url(), true).out());
    assertEquals("primary unreachable", root.get("status"));
    assertEquals(2.0, root.get("exitCode"));
    assertEquals(false, ((Map<?, ?>) root.get("primary")).get("reachable"));
  }

  /** The text of one report section: from its heading to the next blank line. */
  static String section(String out, String heading) {
    int at = out.indexOf("\n" + heading);
    assertTrue(at >= 0, "no section " + heading + " in\n" + out);
    int end = out.indexOf("\n\n", at + 1);
    return end < 0 ? out.substring(at) : out.substring(at, end);
  }
}
