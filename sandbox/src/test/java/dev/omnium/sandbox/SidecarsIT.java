package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * PgBouncer and HAProxy as the sandbox runs them: Debian's binaries, as the server user when the
 * JVM is root, on ports free at run time, PgBouncer's defaults but for what a test sets, stopped
 * with the cluster (and reaped after a killed JVM), their logs among the cluster's.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(180)
class SidecarsIT {
  private static PgCluster cluster;

  @BeforeAll
  static void start() {
    cluster = PgCluster.builder().replicas(2).start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) cluster.close();
  }

  private static Connection through(Sidecar s) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", cluster.user());
    p.setProperty("prepareThreshold", "0");
    p.setProperty("connectTimeout", "10");
    p.setProperty("socketTimeout", "30");
    return DriverManager.getConnection("jdbc:postgresql://" + s.hostPort() + "/"
        + cluster.database(), p);
  }

  private static String one(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  @Test
  void transactionPoolingMovesTransactionsBetweenServerSessions() throws Exception {
    PgBouncer b = cluster.startPgBouncer(cluster.primary(), PgBouncer.Mode.TRANSACTION, Map.of());
    try {
      assertTrue(b.port() != cluster.primary().port() && b.running(), b.toString());
      // Two clients, each in a transaction: PgBouncer needs two server sessions for them; in
      // autocommit afterwards either client may run on either.
      try (Connection a = through(b); Connection c = through(b)) {
        a.setAutoCommit(false);
        c.setAutoCommit(false);
        String pidA = one(a, "SELECT pg_backend_pid()");
        String pidC = one(c, "SELECT pg_backend_pid()");
        assertNotEquals(pidA, pidC, "two open transactions, two server sessions");
        assertEquals(String.valueOf(cluster.primary().port()),
            one(a, "SELECT inet_server_port()"));
        a.commit();
        c.commit();
        a.setAutoCommit(true);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 20; i++) {
          seen.add(one(a, "SELECT pg_backend_pid()"));
          c.setAutoCommit(false);
          one(c, "SELECT 1"); // holds a server session while a runs
          seen.add(one(a, "SELECT pg_backend_pid()"));
          c.commit();
          c.setAutoCommit(true);
        }
        assertTrue(seen.size() >= 2, "one client's transactions ran on " + seen);
      }
      // PgBouncer's default: a startup parameter it does not track is refused
      Properties p = new Properties();
      p.setProperty("user", cluster.user());
      p.setProperty("options", "-c statement_timeout=1000");
      SQLException e = assertThrows(SQLException.class,
          () -> DriverManager.getConnection(b.jdbcUrl(), p).close());
      assertEquals("08P01", e.getSQLState(), e.getMessage());
      assertTrue(e.getMessage().contains("unsupported startup parameter"), e.getMessage());
      assertTrue(cluster.logs().contains("===== " + b), "the cluster's logs include the bouncer's");
    } finally {
      cluster.stop(b);
    }
    assertFalse(b.running());
  }

  @Test
  void sessionPoolingKeepsOneServerSessionPerClient() throws Exception {
    PgBouncer b = cluster.startPgBouncer(cluster.replica(0), PgBouncer.Mode.SESSION,
        Map.of("ignore_startup_parameters", "options"));
    try (Connection a = through(b)) {
      String pid = one(a, "SELECT pg_backend_pid()");
      for (int i = 0; i < 5; i++) {
        assertEquals(pid, one(a, "SELECT pg_backend_pid()"));
      }
      assertEquals("t", one(a, "SELECT pg_is_in_recovery()"));
      // ignore_startup_parameters = options: accepted, and dropped
      Properties p = new Properties();
      p.setProperty("user", cluster.user());
      p.setProperty("options", "-c statement_timeout=1234");
      try (Connection c = DriverManager.getConnection(b.jdbcUrl(), p)) {
        assertEquals("0", one(c, "SELECT current_setting('statement_timeout')"));
      }
    } finally {
      cluster.stop(b);
    }
  }

  @Test
  void bouncersRunAsTheServerUserAndStopWithTheCluster() throws Exception {
    List<ProcessHandle> processes = new ArrayList<>();
    Path dir;
    try (PgCluster c = PgCluster.builder().replicas(1).start()) {
      dir = c.clusterDir();
      PgBouncer b = c.startPgBouncer(c.primary(), PgBouncer.Mode.TRANSACTION, Map.of());
      HaProxy h = c.startHaProxy(c.replicas());
      for (Sidecar s : List.of(b, h)) {
        ProcessHandle p = sidecarProcess(dir, s);
        processes.add(p);
        String owner = p.info().user().orElse("?");
        assertEquals(ServerUser.uid() == 0 ? c.serverUser() : System.getProperty("user.name"),
            owner, s + " runs as");
        assertTrue(Procs.commandLine(p.pid()).contains(dir.toString()),
            "its command line names the cluster directory: " + Procs.commandLine(p.pid()));
      }
    }
    for (ProcessHandle p : processes) {
      assertFalse(Procs.running(p), "sidecar " + p.pid() + " survived close()");
    }
    assertFalse(Files.exists(dir));
  }

  @Test
  void haproxyBalancesRoundRobinOverTheReplicas() throws Exception {
    HaProxy h = cluster.startHaProxy(cluster.replicas());
    try {
      Set<String> ports = new HashSet<>();
      for (int i = 0; i < 4; i++) {
        try (Connection c = through(h)) {
          ports.add(one(c, "SELECT inet_server_port()"));
          assertEquals("t", one(c, "SELECT pg_is_in_recovery()"));
        }
      }
      assertEquals(Set.of(String.valueOf(cluster.replica(0).port()),
          String.valueOf(cluster.replica(1).port())), ports);
    } finally {
      cluster.stop(h);
    }
  }

  @Test
  void sidecarsOfAKilledJvmAreReapedByTheNextStart() throws Exception {
    Process child = Db.childSandbox("--pgbouncer", "transaction", "--reader-endpoint");
    List<ProcessHandle> orphans = new ArrayList<>();
    Path dir = SandboxDirs.base().resolve(child.pid() + "-1");
    try {
      try (var pids = Files.newDirectoryStream(dir, "*.sidecar-pid")) {
        for (Path f : pids) {
          orphans.add(ProcessHandle.of(Long.parseLong(Files.readString(f).trim())).orElseThrow());
        }
      }
      assertEquals(3, orphans.size(), "two bouncers and a proxy");
    } finally {
      child.destroyForcibly(); // SIGKILL: no shutdown hook runs
      assertTrue(child.waitFor(30, TimeUnit.SECONDS));
    }
    for (ProcessHandle p : orphans) {
      assertTrue(Procs.running(p), "a killed JVM leaves its sidecars running: " + p.pid());
    }
    try (PgCluster next = PgCluster.builder().replicas(0).start()) {
      assertEquals("f", Db.one(next, next.primary(), "SELECT pg_is_in_recovery()"));
    }
    for (ProcessHandle p : orphans) {
      assertFalse(Procs.running(p), "orphaned sidecar " + p.pid() + " was not reaped");
    }
    assertFalse(Files.exists(dir), dir + " was not deleted");
  }

  /** The sidecar's own process (not runuser), from the pid file the sandbox writes. */
  private static ProcessHandle sidecarProcess(Path dir, Sidecar s) throws Exception {
    Path f = dir.resolve(s.name() + ".sidecar-pid");
    Db.await(Duration.ofSeconds(10), "the pid file of " + s, () -> Files.exists(f));
    return ProcessHandle.of(Long.parseLong(Files.readString(f).trim())).orElseThrow();
  }
}
