package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 items 6 and 7: a healthy first start with {@code heartbeatWriter=true} logs no warning
 * and no false hint; a heartbeat table the watcher may not read (42501) and a reserved word as
 * table name (42601) get their own states and messages, keep the watcher's session (no reconnect
 * every interval), and {@code check} says the same. The first test needs a database that has
 * never had a heartbeat table, so the order is fixed.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WatcherStatesIT {
  /** No heartbeat table and no test-side writer: the first test needs a database without one. */
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).withoutHeartbeat().build();

  static String url(String app, String extra) {
    return SANDBOX.url(app, "heartbeatInterval=200ms&maxAge=2s"
        + "&primaryPoolSize=1&replicaPoolSize=1&fallbackPoolSize=1"
        + (extra == null ? "" : "&" + extra));
  }

  static boolean readsOnReplica(OmniumDataSource ds) throws SQLException {
    try (OmniumConnection c = ds.read(); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  /** The lag watcher's backend on the replica: pid and start, as the replica reports them. */
  static String watcherSession(String app) throws SQLException {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.replica(0));
         PreparedStatement ps = c.prepareStatement(
             "SELECT string_agg(pid || '@' || backend_start, ',') FROM pg_stat_activity"
                 + " WHERE application_name = ?")) {
      ps.setString(1, app + ":watcher");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  static String check(String url) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    HealthCheck.run(url, new Properties(), false, out);
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /**
   * Lines written to System.err while {@code body} runs (slf4j-simple, the test binding, looks
   * System.err up for every line), still passed on to the original stream.
   */
  static List<String> logged(Callable<Void> body) throws Exception {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    OutputStream tee = new OutputStream() {
      @Override public synchronized void write(int b) {
        original.write(b);
        captured.write(b);
      }

      @Override public synchronized void write(byte[] b, int off, int len) {
        original.write(b, off, len);
        captured.write(b, off, len);
      }
    };
    System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    try {
      body.call();
    } finally {
      System.setErr(original);
    }
    List<String> lines = new ArrayList<>();
    synchronized (tee) {
      for (String l : captured.toString(StandardCharsets.UTF_8).split("\n")) lines.add(l);
    }
    return lines;
  }

  @Test
  @Order(1)
  void aHealthyFirstStartWithTheWriterLogsNoWarning() throws Exception {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT to_regclass('replica_heartbeat') IS NULL")) {
      rs.next();
      assertTrue(rs.getBoolean(1), "a fresh database: no heartbeat table yet");
    }
    List<String> lines = logged(() -> {
      try (OmniumDataSource ds = new OmniumDataSource(url("first", "heartbeatWriter=true"))) {
        Poll.until(Duration.ofSeconds(30), "reads on the replica", () -> readsOnReplica(ds));
      }
      return null;
    });
    List<String> ours =
        lines.stream().filter(l -> l.contains("dev.omnium")).collect(Collectors.toList());
    List<String> loud = ours.stream().filter(l -> l.contains(" WARN ") || l.contains(" ERROR "))
        .collect(Collectors.toList());
    assertEquals(List.of(), loud,
        "a healthy first start logs no warning; all lines:\n" + String.join("\n", ours));
    for (String l : ours) {
      assertFalse(l.contains("enable heartbeatWriter=true"), "a hint that is not true here: " + l);
      assertFalse(l.contains("readable again (was STARTING)"), "nothing was readable before: " + l);
    }
  }

  @Test
  @Order(2)
  void permissionDeniedHasItsOwnStateKeepsItsSessionAndCheckSaysTheSame() throws Exception {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS replica_heartbeat (id int PRIMARY KEY CHECK (id = 1),"
          + " beat_at timestamptz NOT NULL)");
      st.execute("INSERT INTO replica_heartbeat VALUES (1, now())"
          + " ON CONFLICT (id) DO UPDATE SET beat_at = now()");
      st.execute("CREATE ROLE watcher LOGIN");
    }
    SANDBOX.cluster().awaitCaughtUp(SANDBOX.replica(0));
    String url = url("denied", "replicaUser=watcher");
    try (OmniumDataSource ds = new OmniumDataSource(url)) {
      awaitState(ds, "PERMISSION_DENIED", Duration.ofSeconds(20));
      assertNoReconnects("denied");
      assertFalse(readsOnReplica(ds), "lag unknown: reads take the fallback route");
      String report = check(url);
      assertTrue(report.contains("permission denied on heartbeat table replica_heartbeat"), report);
      assertTrue(report.contains("GRANT SELECT ON replica_heartbeat"), report);

      try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement()) {
        st.execute("GRANT SELECT ON replica_heartbeat TO watcher");
        st.execute("UPDATE replica_heartbeat SET beat_at = now()");
      }
      Poll.until(Duration.ofSeconds(20), "reads on the replica once granted",
          () -> readsOnReplica(ds));
      assertEquals("OK", ds.metrics().getReplicaStates().get(SANDBOX.replica(0).hostPort()));
    }
  }

  @Test
  @Order(3)
  void aReservedWordAsTableNameHasItsOwnStateKeepsItsSessionAndCheckSaysTheSame() throws Exception {
    String url = url("reserved", "heartbeatTable=order");
    try (OmniumDataSource ds = new OmniumDataSource(url)) {
      awaitState(ds, "BAD_TABLE_NAME", Duration.ofSeconds(20));
      assertNoReconnects("reserved");
      String report = check(url);
      assertTrue(report.contains("heartbeatTable=order is not a usable table name"), report);
      assertTrue(report.contains("public.order"), report);
    }
  }

  @Test
  @Order(4)
  void theWatchersOwnRecoveryConflictHasItsOwnStateAndKeepsItsSession() throws Exception {
    // A heartbeat "table" whose read takes 400 ms, so replay can conflict with the probe itself:
    // the primary takes ACCESS EXCLUSIVE on the real table every 150 ms, and the replica cancels
    // queries holding it up for more than 100 ms.
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement()) {
      st.execute("CREATE VIEW slow_beat AS SELECT h.id, h.beat_at FROM replica_heartbeat h,"
          + " pg_sleep(0.4) s");
    }
    SANDBOX.cluster().awaitCaughtUp(SANDBOX.replica(0));
    SANDBOX.cluster().setConflictDelay(SANDBOX.replica(0), Duration.ofMillis(100));
    AtomicBoolean locking = new AtomicBoolean(true);
    Thread locker = new Thread(() -> {
      try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement()) {
        while (locking.get()) {
          st.execute("BEGIN; LOCK TABLE replica_heartbeat IN ACCESS EXCLUSIVE MODE;"
              + " UPDATE replica_heartbeat SET beat_at = now(); COMMIT");
          Thread.sleep(150);
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, "test-locker");
    locker.setDaemon(true);
    String url = url("conflict", "heartbeatTable=slow_beat");
    try (OmniumDataSource ds = new OmniumDataSource(url)) {
      locker.start();
      awaitState(ds, "RECOVERY_CONFLICT", Duration.ofSeconds(30));
      String session = watcherSession("conflict");
      assertFalse(session == null || session.contains(","), "one watcher session: " + session);
      Thread.sleep(2_000); // ten intervals of conflicts: the old code reconnected at each
      assertEquals(session, watcherSession("conflict"), "an ERROR conflict keeps the session");
    } finally {
      locking.set(false);
      locker.join(10_000);
      SANDBOX.cluster().setConflictDelay(SANDBOX.replica(0), Duration.ofSeconds(30));
    }
  }

  /** Waits (at most {@code within}) until the watcher of replica 0 is in {@code state}. */
  private static void awaitState(OmniumDataSource ds, String state, Duration within)
      throws Exception {
    RouterMXBean m = ds.metrics();
    String replica = SANDBOX.replica(0).hostPort();
    Poll.until(within, "state " + state, () -> state.equals(m.getReplicaStates().get(replica)));
  }

  /** The watcher keeps one session for ten intervals: no reconnect per interval. */
  private static void assertNoReconnects(String app) throws Exception {
    String first = watcherSession(app);
    if (first == null || first.contains(",")) fail("one watcher session expected, got " + first);
    Thread.sleep(2_000); // ten heartbeat intervals: the old code reconnected at every one
    assertEquals(first, watcherSession(app), "the watcher reconnected");
  }
}
