package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.omnium.sandbox.testkit.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** Start-up errors, close, the shutdown story for killed JVMs, and local installs. */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(120)
class LifecycleIT {


  @Test
  void closeStopsEveryServerProcessAndDeletesTheDirectory() throws SQLException {
    PgCluster cluster = PgCluster.builder().replicas(1).start();
    Path dir = cluster.clusterDir();
    // Handles, not bare pids: a handle knows its start time, so a recycled pid cannot fool the
    // check.
    List<ProcessHandle> processes = new ArrayList<>();
    for (PgNode n : List.of(cluster.primary(), cluster.replica(0))) {
      processes.addAll(Procs.tree(cluster.postmasterPid(n).orElseThrow()));
    }
    assertTrue(processes.size() > 4, "postmasters and their children: " + processes);
    assertTrue(ClusterRegistry.open().contains(cluster));
    if (ServerUser.uid() == 0) {
      // PostgreSQL refuses root: the sandbox runs it as an unprivileged user.
      assertTrue(List.of("postgres", "nobody").contains(cluster.serverUser()),
          cluster.serverUser());
      assertEquals(cluster.serverUser(), processes.get(0).info().user().orElse("?"));
    } else {
      assertEquals(System.getProperty("user.name"), cluster.serverUser());
    }

    cluster.close();
    for (ProcessHandle p : processes) {
      assertFalse(Procs.running(p), "process " + p.pid() + " survived close()");
    }
    assertFalse(Files.exists(dir), dir + " still exists");
    assertFalse(ClusterRegistry.open().contains(cluster));
    assertThrows(SQLException.class, () -> cluster.connect(cluster.primary()).close());
    cluster.close(); // idempotent
    assertTrue(cluster.isClosed());
  }

  @Test
  void serversOfAKilledJvmAreReapedByTheNextStart() throws Exception {
    Process child = Db.childSandbox();
    List<ProcessHandle> orphans = new ArrayList<>();
    Path dir = SandboxDirs.base().resolve(child.pid() + "-1");
    try {
      for (String node : List.of("primary", "replica1")) {
        OptionalLong pid = PgServer.postmasterPid(dir.resolve(node));
        assertTrue(pid.isPresent(), node + " of the child is not running in " + dir);
        orphans.add(ProcessHandle.of(pid.getAsLong()).orElseThrow());
      }
    } finally {
      child.destroyForcibly(); // SIGKILL: no shutdown hook runs
      assertTrue(child.waitFor(30, TimeUnit.SECONDS));
    }
    for (ProcessHandle p : orphans) {
      assertTrue(Procs.running(p), "a killed JVM leaves its servers running: " + p.pid());
    }

    try (PgCluster next = PgCluster.builder().replicas(0).start()) {
      assertEquals("f", Db.one(next, next.primary(), "SELECT pg_is_in_recovery()"));
      assertTrue(next.replicas().isEmpty());
    }
    // Another JVM's sandbox starting at the same time may have claimed the directory first and
    // be reaping it still (each start reaps every orphan; one claims it): wait for the reaper.
    for (ProcessHandle p : orphans) {
      Poll.until(Duration.ofSeconds(30), "orphaned postmaster " + p.pid() + " reaped",
          () -> !Procs.running(p));
    }
    Poll.until(Duration.ofSeconds(30), dir + " deleted", () -> !Files.exists(dir));
  }

  @Test
  void unknownVersionFailsWithAClearMessage() {
    assumeTrue(Db.bundledBinaries(), "a local install is in use, whatever the version");
    PgSandboxException e = assertThrows(PgSandboxException.class,
        () -> PgCluster.builder().version("11").localInstall(null).start().close());
    assertTrue(e.getMessage().contains("OMNIUM_PG_BIN") && e.getMessage().contains("18"),
        e.getMessage());
  }

  @Test
  void localInstallWithoutBinariesFailsWithAClearMessage() {
    PgSandboxException e = assertThrows(PgSandboxException.class,
        () -> PgCluster.builder().localInstall(Path.of("/nonexistent/bin")).start().close());
    assertTrue(e.getMessage().contains("/nonexistent/bin") && e.getMessage().contains("initdb"),
        e.getMessage());
  }

  @Test
  void reservedSettingsAreRejected() {
    assertThrows(IllegalArgumentException.class, () -> PgCluster.builder().setting("port", "1"));
    assertThrows(IllegalArgumentException.class,
        () -> PgCluster.builder().setting("bad name", "1"));
    assertThrows(IllegalArgumentException.class, () -> PgCluster.builder().replicas(-1));
  }

  /** Runs where a distribution package is installed, e.g. /usr/lib/postgresql/15/bin. */
  @Test
  void localInstallWorksToo() throws SQLException {
    Path bin = localInstall();
    assumeTrue(bin != null, "no local PostgreSQL install under /usr/lib/postgresql");
    try (PgCluster cluster = PgCluster.builder().localInstall(bin).start()) {
      assertTrue(cluster.version().matches("\\d+(\\.\\d+)+"), cluster.version());
      assertTrue(Db.streaming(cluster, cluster.replica(0)));
      Db.exec(cluster, cluster.primary(), "CREATE TABLE local_t AS SELECT 1 AS one");
      cluster.awaitCaughtUp(cluster.replica(0));
      assertEquals("1", Db.one(cluster, cluster.replica(0), "SELECT one FROM local_t"));
    }
  }

  private static Path localInstall() {
    Path root = Path.of("/usr/lib/postgresql");
    if (!Files.isDirectory(root)) {
      return null;
    }
    try (var versions = Files.list(root)) {
      return versions.map(v -> v.resolve("bin"))
          .filter(b -> Files.isExecutable(b.resolve("initdb")))
          .filter(b -> Files.isExecutable(b.resolve("postgres")))
          .sorted().reduce((a, b) -> b).orElse(null);
    } catch (IOException e) {
      return null;
    }
  }
}
