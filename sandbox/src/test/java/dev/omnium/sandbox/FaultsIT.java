package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** Injected faults: a crashed replica, a black-holed replica, a restarted primary. */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(120)
class FaultsIT {

  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private static PgCluster cluster;
  private static PgNode primary;
  private static PgNode replica;

  @BeforeAll
  static void start() throws SQLException {
    cluster = PgCluster.builder().start();
    primary = cluster.primary();
    replica = cluster.replica(0);
    Db.exec(cluster, primary, "CREATE TABLE t (id int PRIMARY KEY)");
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void stoppedReplicaRefusesConnectionsAndStreamsAgainAfterStart() throws SQLException {
    int port = replica.port();
    cluster.stop(replica, true);
    assertTrue(cluster.postmasterPid(replica).isEmpty());
    SQLException refused = assertThrows(SQLException.class, () -> cluster.connect(replica).close());
    assertEquals("08001", refused.getSQLState(), String.valueOf(refused));

    Db.exec(cluster, primary, "INSERT INTO t VALUES (100)"); // written while the replica is down
    cluster.start(replica);
    assertEquals(port, replica.port());
    assertEquals("t", Db.one(cluster, replica, "SELECT pg_is_in_recovery()"));
    cluster.awaitStreaming(replica, DEADLINE);
    cluster.awaitCaughtUp(replica);
    assertEquals("100", Db.one(cluster, replica, "SELECT id FROM t WHERE id = 100"));
  }

  @Test
  void frozenReplicaDoesNotAnswerUntilThawed() throws Exception {
    Properties quick = new Properties();
    quick.setProperty("socketTimeout", "1");
    quick.setProperty("connectTimeout", "2");
    quick.setProperty("loginTimeout", "3");
    try (Connection before = cluster.connect(replica, quick)) {
      assertEquals(1, selectOne(before));
      cluster.freeze(replica);
      try {
        long t0 = System.nanoTime();
        assertThrows(SQLException.class, () -> selectOne(before), "an open connection hangs");
        assertThrows(SQLException.class, () -> cluster.connect(replica, quick).close(),
            "a new connection is accepted by the kernel but never answered");
        long seconds = (System.nanoTime() - t0) / 1_000_000_000L;
        assertTrue(seconds < 15, "timeouts, not hangs: " + seconds + " s");
      } finally {
        cluster.thaw(replica);
      }
    }
    Db.await(DEADLINE, "the thawed replica to answer", () -> {
      try (Connection c = cluster.connect(replica, quick)) {
        return selectOne(c) == 1;
      }
    });
    cluster.awaitStreaming(replica, DEADLINE);
    Db.exec(cluster, primary, "INSERT INTO t VALUES (200)");
    cluster.awaitCaughtUp(replica);
    assertEquals("200", Db.one(cluster, replica, "SELECT id FROM t WHERE id = 200"));
  }

  @Test
  void restartPrimaryKeepsItsPortAndTheReplicaStreamsAgain() throws SQLException {
    int port = primary.port();
    long pidBefore = cluster.postmasterPid(primary).orElseThrow();
    cluster.restartPrimary();
    assertEquals(port, primary.port());
    assertNotEquals(pidBefore, cluster.postmasterPid(primary).orElseThrow());
    assertEquals("f", Db.one(cluster, primary, "SELECT pg_is_in_recovery()"));
    cluster.awaitStreaming(replica, DEADLINE);
    Db.exec(cluster, primary, "INSERT INTO t VALUES (300)");
    cluster.awaitCaughtUp(replica);
    assertEquals("300", Db.one(cluster, replica, "SELECT id FROM t WHERE id = 300"));
  }

  @Test
  void controlMethodsRejectForeignNodesAndThePrimaryWhereAReplicaIsNeeded() {
    assertThrows(IllegalArgumentException.class, () -> cluster.pauseReplay(primary));
    assertThrows(IllegalArgumentException.class, () -> cluster.awaitCaughtUp(primary));
    PgNode stranger = new PgNode("replica9", "omnium", replica.logFile(), false);
    assertThrows(IllegalArgumentException.class, () -> cluster.freeze(stranger));
  }

  private static int selectOne(Connection c) throws SQLException {
    try (Statement s = c.createStatement(); var rs = s.executeQuery("SELECT 1")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
