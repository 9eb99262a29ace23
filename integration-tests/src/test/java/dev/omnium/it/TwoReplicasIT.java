package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.Heartbeat;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Several replicas: each watched, reads spread over the fresh ones, a stale one skipped. */
@ExtendWith(PgClusterLogsOnFailure.class)
class TwoReplicasIT {
  static PgCluster cluster;
  static Heartbeat heartbeat;

  @BeforeAll
  static void up() throws Exception {
    cluster = PgCluster.builder().replicas(2).start();
    heartbeat = Heartbeat.start(cluster, Duration.ofMillis(100));
  }

  @AfterAll
  static void down() throws Exception {
    OmniumDriver.shutdown();
    if (heartbeat != null) heartbeat.close();
    if (cluster != null) cluster.close();
  }

  @Test
  void readsUseBothFreshReplicasAndSkipAStaleOne() throws Exception {
    String url = "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?replica=" + cluster.replica(0).hostPort() + "," + cluster.replica(1).hostPort()
        + "&applicationName=two&maxAge=1s&heartbeatInterval=200ms&user=" + cluster.user();
    Set<Integer> replicaPorts = Set.of(cluster.replica(0).port(), cluster.replica(1).port());
    Poll.until(Duration.ofSeconds(10), "both replicas to be used", () -> {
      Set<Integer> seen = new TreeSet<>();
      for (int i = 0; i < 20; i++) {
        try (Connection c = DriverManager.getConnection(url)) {
          c.setReadOnly(true);
          Where w = Where.of(c);
          if (w.inRecovery()) seen.add(w.port());
        }
      }
      return seen.equals(replicaPorts);
    });

    cluster.pauseReplay(cluster.replica(0));
    try {
      Poll.until(Duration.ofSeconds(10), "reads to use only the fresh replica", () -> {
        Set<Integer> seen = new TreeSet<>();
        for (int i = 0; i < 10; i++) {
          try (Connection c = DriverManager.getConnection(url)) {
            c.setReadOnly(true);
            seen.add(Where.of(c).port());
          }
        }
        return seen.equals(Set.of(cluster.replica(1).port()));
      });
    } finally {
      cluster.resumeReplay(cluster.replica(0));
    }
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      assertTrue(Where.of(c).inRecovery());
      assertEquals("two:replica", Where.of(c).applicationName());
    }
  }
}
