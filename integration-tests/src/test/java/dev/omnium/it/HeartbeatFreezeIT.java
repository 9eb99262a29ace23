package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 item 4: a heartbeat leader that stops without its session dying (here a whole
 * application JVM frozen with SIGSTOP: its kernel still acknowledges TCP) is replaced within a few
 * intervals, because the server ends the frozen writer's idle session and with it the lock.
 */
class HeartbeatFreezeIT {
  /** No heartbeat table and no test-side writer: the driver's own writers are under test. */
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).withoutHeartbeat().build();

  static String url(String app) {
    return SANDBOX.url(app, "heartbeatWriter=true&heartbeatInterval=250ms&maxAge=2s"
        + "&primaryPoolSize=1&replicaPoolSize=1&fallbackPoolSize=1");
  }

  /** application_name of the session holding the writer lock, as the primary reports it. */
  static String leader() throws SQLException {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT a.application_name FROM pg_locks l"
             + " JOIN pg_stat_activity a ON a.pid = l.pid"
             + " WHERE l.locktype = 'advisory' AND l.granted"
             + " AND a.application_name LIKE 'hbf-%:heartbeat'")) {
      String name = rs.next() ? rs.getString(1) : null;
      return rs.next() ? "more than one: " + name : name;
    }
  }

  static double beatAge() throws SQLException {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery(
             "SELECT extract(epoch FROM now() - beat_at) FROM replica_heartbeat")) {
      return rs.next() ? rs.getDouble(1) : Double.MAX_VALUE;
    }
  }

  static void signal(long pid, String sig) throws Exception {
    Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
    assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "kill -" + sig + " " + pid);
  }

  @Test
  void aFrozenLeaderJvmIsReplacedWithinAFewIntervals() throws Exception {
    Path log = Paths.get("target", "heartbeat-leader-" + SANDBOX.cluster().version() + ".log");
    Files.createDirectories(log.getParent());
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    Process frozen = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
        "-Dorg.slf4j.simpleLogger.showDateTime=true", HeartbeatLeaderMain.class.getName(),
        url("hbf-frozen")))
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    OmniumDataSource standby = null;
    boolean stopped = false;
    try {
      Poll.until(Duration.ofSeconds(60), "the forked JVM to lead",
          () -> "hbf-frozen:heartbeat".equals(leader()));
      standby = new OmniumDataSource(url("hbf-standby"));
      standby.metrics();
      OmniumDataSource ds = standby;
      Poll.until(Duration.ofSeconds(20), "reads on the replica on the forked writer's beat", () -> {
        try (OmniumConnection c = ds.read()) {
          return Where.of(c).inRecovery();
        }
      });
      assertEquals("hbf-frozen:heartbeat", leader(), "the first writer keeps the lock");

      signal(frozen.pid(), "STOP");
      stopped = true;
      Duration takeover = Poll.until(Duration.ofSeconds(30), "another writer to take over",
          () -> "hbf-standby:heartbeat".equals(leader()));
      System.out.println("FIGURE heartbeat takeover after SIGSTOP of the leader JVM"
          + " (interval 250ms): " + takeover.toMillis() + " ms");
      assertTrue(standby.metrics().isHeartbeatLeader(), "the driver knows it leads now");
      Poll.until(Duration.ofSeconds(10), "a fresh beat from the new leader", () -> beatAge() < 1.0);
      Poll.until(Duration.ofSeconds(20), "reads on the replica again", () -> {
        try (OmniumConnection c = ds.read()) {
          return Where.of(c).inRecovery();
        }
      });

      // The frozen leader wakes up: its session is gone, so it competes again and does not write.
      signal(frozen.pid(), "CONT");
      stopped = false;
      frozen.getOutputStream().write('\n');
      frozen.getOutputStream().flush();
      Poll.until(Duration.ofSeconds(20), "the woken writer to know it does not lead",
          () -> Files.readString(log).contains("leader=false") || askAgain(frozen));
      assertEquals("hbf-standby:heartbeat", leader(), "exactly one holder, the new one");
    } finally {
      if (stopped) signal(frozen.pid(), "CONT");
      frozen.destroyForcibly();
      frozen.waitFor(20, TimeUnit.SECONDS);
      if (standby != null) standby.close();
      System.out.println("forked leader log: " + new File(log.toString()).getAbsolutePath());
    }
  }

  private static boolean askAgain(Process p) throws Exception {
    p.getOutputStream().write('\n');
    p.getOutputStream().flush();
    return false;
  }
}
