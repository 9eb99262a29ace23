package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
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
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
  }

  static String url(String replicas, String extra) {
    return SANDBOX.primaryUrl("checkit", "replica=" + replicas + "&maxAge=1s"
        + (extra == null ? "" : "&" + extra));
  }

  static String url() {
    return url(cluster.replica(0).hostPort(), null);
  }

  /** Exit status and everything printed. */
  record Result(int exit, String out) { }

  static Result check(String url, boolean json) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    int exit = HealthCheck.run(url, new Properties(), json, ps);
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertFalse(out.contains(cluster.password()), "the password leaked:\n" + out);
    return new Result(exit, out);
  }

  @Test
  @Order(1)
  void healthyClusterExitsZeroAndReportsBothServers() throws Exception {
    // A session holding the writer's advisory lock, as the heartbeat writer does.
    Properties p = new Properties();
    p.setProperty("ApplicationName", "checkit-writer");
    try (Connection writer = cluster.connect(cluster.primary(), p); Statement st = writer.createStatement()) {
      long key = HeartbeatWriter.lockKey("replica_heartbeat");
      try (ResultSet rs = st.executeQuery("SELECT pg_try_advisory_lock(" + key + "), pg_backend_pid()")) {
        rs.next();
        assertTrue(rs.getBoolean(1));
        int writerPid = rs.getInt(2);
        Result r = check(url(), false);
        System.out.println("---- check, healthy cluster (PostgreSQL " + cluster.version() + ") ----");
        System.out.println(r.out());
        assertEquals(0, r.exit(), r.out());
        String out = r.out();
        assertTrue(out.startsWith("omnium check: HEALTHY (exit 0)"), out);
        assertTrue(out.contains(cluster.primary().hostPort()), out);
        assertTrue(out.contains(cluster.replica(0).hostPort()), out);
        assertTrue(out.contains("(fresh)"), out);
        assertTrue(out.contains("streaming"), out);
        assertTrue(out.contains("held by pid " + writerPid + " (checkit-writer"), out);
        assertTrue(out.contains("read on replica1 " + cluster.replica(0).hostPort()), out);
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
    Map<String, Object> root = (Map<String, Object>) new Json(r.out()).parse();
    assertEquals("healthy", root.get("status"));
    assertEquals(0.0, root.get("exitCode"));
    assertEquals(List.of(), root.get("problems"));
    Map<?, ?> primary = (Map<?, ?>) root.get("primary");
    assertEquals(true, primary.get("reachable"));
    assertEquals(false, primary.get("inRecovery"));
    assertEquals(cluster.primary().hostPort(), primary.get("endpoint"));
    Map<?, ?> hb = (Map<?, ?>) primary.get("heartbeat");
    assertEquals(true, hb.get("fresh"));
    List<?> replication = (List<?>) primary.get("replication");
    assertEquals(1, replication.size(), "one standby in pg_stat_replication");
    assertEquals("streaming", ((Map<?, ?>) replication.get(0)).get("state"));
    List<?> replicas = (List<?>) root.get("replicas");
    assertEquals(1, replicas.size());
    Map<?, ?> replica = (Map<?, ?>) replicas.get(0);
    assertEquals(cluster.replica(0).hostPort(), replica.get("endpoint"));
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
    try (Connection holder = cluster.connect(cluster.primary());
         Connection waiter = cluster.connect(cluster.primary());
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
          () -> !((List<?>) ((Map<?, ?>) ((Map<?, ?>) new Json(check(url(), true).out()).parse())
              .get("primary")).get("lockWaits")).isEmpty());
      Result r = check(url(), false);
      assertEquals(0, r.exit(), "lock waits are reported, not degraded:\n" + r.out());
      String out = r.out();
      assertTrue(out.contains("NOTE     primary " + cluster.primary().hostPort() + ": 1 session waits for a lock"), out);
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
    Result r = check(url(cluster.replica(0).hostPort(), "maxAge=soon"), false);
    assertEquals(2, r.exit(), r.out());
    assertTrue(r.out().startsWith("omnium check: FAILED (exit 2)\n  FAILED   cannot check: "), r.out());
    assertTrue(r.out().contains("maxAge"), r.out());
    Map<?, ?> root = (Map<?, ?>) new Json(check(url(cluster.replica(0).hostPort(), "maxAge=soon"), true).out()).parse();
    assertEquals("failed", root.get("status"));
  }

  @Test
  @Order(4)
  void missingHeartbeatTableIsDegraded() {
    Result r = check(url(cluster.replica(0).hostPort(), "heartbeatTable=no_such_heartbeat"), false);
    assertEquals(1, r.exit(), r.out());
    assertTrue(r.out().contains("DEGRADED primary " + cluster.primary().hostPort()
        + ": no heartbeat table no_such_heartbeat"), r.out());
    assertTrue(r.out().contains("DEGRADED replica1 " + cluster.replica(0).hostPort()
        + ": no heartbeat table no_such_heartbeat on the replica"), r.out());
  }

  @Test
  @Order(5)
  void aListedReplicaThatIsThePrimaryIsAnExpectedRole() {
    // Every node in both lists (Patroni-style): the one not in recovery is the primary, a note.
    Result r = check(url(cluster.replica(0).hostPort() + "," + cluster.primary().hostPort(), null), false);
    assertEquals(0, r.exit(), r.out());
    assertTrue(r.out().contains("NOTE     replica2 " + cluster.primary().hostPort()
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
    Result r = check(url(cluster.replica(0).hostPort() + ",127.0.0.1:" + dead, null), false);
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertEquals(1, r.exit(), r.out());
    assertTrue(r.out().contains("DEGRADED replica2 127.0.0.1:" + dead + ": replica unreachable: "), r.out());
    assertTrue(ms < 8000, "took " + ms + " ms");
  }

  @Test
  @Order(7)
  void pausedReplayOverMaxAgeIsDegraded() throws Exception {
    cluster.pauseReplay(cluster.replica(0));
    try {
      Poll.until(Duration.ofSeconds(15), "check to report degraded", () -> check(url(), false).exit() == 1);
      Result r = check(url(), false);
      System.out.println("---- check, replay paused (PostgreSQL " + cluster.version() + ") ----");
      System.out.println(r.out());
      assertEquals(1, r.exit(), r.out());
      assertTrue(r.out().contains("DEGRADED replica1 " + cluster.replica(0).hostPort() + ": heartbeat lag "), r.out());
      assertTrue(r.out().contains("is over maxAge 1s (WAL replay is paused)"), r.out());
      assertTrue(r.out().contains("(stale)"), r.out());
      // heavy queries leave the stale replica
      assertTrue(r.out().contains("read on primary " + cluster.primary().hostPort() + ": no fresh replica"), r.out());

      Map<?, ?> root = (Map<?, ?>) new Json(check(url(), true).out()).parse();
      assertEquals("degraded", root.get("status"));
      Map<?, ?> replica = (Map<?, ?>) ((List<?>) root.get("replicas")).get(0);
      assertEquals(false, replica.get("fresh"));
      assertEquals(true, replica.get("replayPaused"));
      // the clock-free measure waits at most maxAge: then it says "more than lagSeconds"
      assertTrue((Double) replica.get("lagSeconds") > 1.0
          || (Double) replica.get("lagSeconds") >= 1.0
          && Boolean.TRUE.equals(replica.get("lagOverSeconds")), String.valueOf(replica));
    } finally {
      cluster.resumeReplay(cluster.replica(0));
      cluster.awaitCaughtUp(cluster.replica(0));
    }
    Poll.until(Duration.ofSeconds(10), "check to be healthy again", () -> check(url(), false).exit() == 0);
  }

  @Test
  @Order(Integer.MAX_VALUE) // stops the primary: last
  void primaryDownExitsTwo() throws Exception {
    cluster.stop(cluster.primary(), true);
    long start = System.nanoTime();
    Result r = check(url(), false);
    long ms = (System.nanoTime() - start) / 1_000_000;
    System.out.println("---- check, primary stopped (PostgreSQL " + cluster.version() + ") ----");
    System.out.println(r.out());
    assertEquals(2, r.exit(), r.out());
    assertTrue(r.out().startsWith("omnium check: PRIMARY UNREACHABLE (exit 2)"), r.out());
    assertTrue(r.out().contains("FAILED   primary " + cluster.primary().hostPort() + ": cannot reach the primary: "), r.out());
    assertTrue(ms < 8000, "took " + ms + " ms");
    Map<?, ?> root = (Map<?, ?>) new Json(check(url(), true).out()).parse();
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

  // ---------------------------------------------------------------- fixtures

  /** A strict recursive-descent JSON parser: objects, arrays, strings, numbers (as Double), literals. */
  static final class Json {
    private final String s;
    private int i;

    Json(String s) {
      this.s = s;
    }

    Object parse() {
      Object v = value();
      ws();
      if (i != s.length()) throw error("trailing text");
      return v;
    }

    private Object value() {
      ws();
      if (i >= s.length()) throw error("unexpected end");
      char c = s.charAt(i);
      switch (c) {
        case '{': return object();
        case '[': return array();
        case '"': return string();
        case 't': return literal("true", Boolean.TRUE);
        case 'f': return literal("false", Boolean.FALSE);
        case 'n': return literal("null", null);
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw error("unexpected '" + c + "'");
      }
    }

    private Map<String, Object> object() {
      Map<String, Object> m = new LinkedHashMap<>();
      i++;
      ws();
      if (peek() == '}') {
        i++;
        return m;
      }
      while (true) {
        ws();
        if (peek() != '"') throw error("expected a key");
        String k = string();
        ws();
        expect(':');
        if (m.put(k, value()) != null) throw error("duplicate key " + k);
        ws();
        char c = next();
        if (c == '}') return m;
        if (c != ',') throw error("expected , or }");
      }
    }

    private List<Object> array() {
      List<Object> l = new ArrayList<>();
      i++;
      ws();
      if (peek() == ']') {
        i++;
        return l;
      }
      while (true) {
        l.add(value());
        ws();
        char c = next();
        if (c == ']') return l;
        if (c != ',') throw error("expected , or ]");
      }
    }

    private String string() {
      expect('"');
      StringBuilder b = new StringBuilder();
      while (true) {
        char c = next();
        if (c == '"') return b.toString();
        if (c < 0x20) throw error("control character in string");
        if (c != '\\') {
          b.append(c);
          continue;
        }
        char e = next();
        switch (e) {
          case '"': case '\\': case '/': b.append(e); break;
          case 'b': b.append('\b'); break;
          case 'f': b.append('\f'); break;
          case 'n': b.append('\n'); break;
          case 'r': b.append('\r'); break;
          case 't': b.append('\t'); break;
          case 'u':
            if (i + 4 > s.length()) throw error("short \\u escape");
            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            i += 4;
            break;
          default: throw error("bad escape \\" + e);
        }
      }
    }

    private Double number() {
      int start = i;
      if (peek() == '-') i++;
      if (peek() == '0') {
        i++;
      } else if (Character.isDigit(peek())) {
        while (Character.isDigit(peek())) i++;
      } else {
        throw error("bad number");
      }
      if (peek() == '.') {
        i++;
        if (!Character.isDigit(peek())) throw error("bad fraction");
        while (Character.isDigit(peek())) i++;
      }
      if (peek() == 'e' || peek() == 'E') {
        i++;
        if (peek() == '+' || peek() == '-') i++;
        if (!Character.isDigit(peek())) throw error("bad exponent");
        while (Character.isDigit(peek())) i++;
      }
      return Double.valueOf(s.substring(start, i));
    }

    private Object literal(String word, Object v) {
      if (!s.startsWith(word, i)) throw error("expected " + word);
      i += word.length();
      return v;
    }

    private void ws() {
      while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
    }

    private char peek() {
      return i < s.length() ? s.charAt(i) : '\0';
    }

    private char next() {
      if (i >= s.length()) throw error("unexpected end");
      return s.charAt(i++);
    }

    private void expect(char c) {
      if (next() != c) throw error("expected " + c);
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException("invalid JSON at " + i + ": " + what + "\n" + s);
    }
  }
}
