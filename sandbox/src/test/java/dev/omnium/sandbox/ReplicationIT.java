package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** Streaming replication works for real: visibility, recovery status, lag and conflicts. */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(120)
class ReplicationIT {

  private static final Duration DEADLINE = Duration.ofSeconds(20);
  private static PgCluster cluster;
  private static PgNode primary;
  private static PgNode replica;

  @BeforeAll
  static void start() {
    cluster = PgCluster.builder().replicas(1).start();
    primary = cluster.primary();
    replica = cluster.replica(0);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void nodesDescribeThemselves() {
    assertEquals("primary", primary.name());
    assertEquals("replica1", replica.name());
    assertEquals(1, cluster.replicas().size());
    assertEquals("127.0.0.1", primary.host());
    assertEquals("127.0.0.1:" + primary.port(), primary.hostPort());
    assertEquals("jdbc:postgresql://127.0.0.1:" + replica.port() + "/omnium", replica.jdbcUrl());
    assertEquals("omnium", cluster.database());
    assertEquals("postgres", cluster.user());
    assertNull(cluster.password());
    if (Db.bundledBinaries()) {
      assertTrue(cluster.version().startsWith(Db.requestedMajor() + "."), cluster.version());
    }
    assertEquals("jdbc:omnium:postgresql://" + primary.hostPort() + "/omnium?replica="
        + replica.hostPort(), cluster.omniumUrl());
    assertTrue(primary.port() != replica.port());
  }

  @Test
  void serversReportTheBundledVersion() throws SQLException {
    Assumptions.assumeTrue(Db.bundledBinaries(), "a local install is in use");
    String major = Db.one(cluster, primary,
        "SELECT current_setting('server_version_num')::int / 10000");
    assertEquals(Db.requestedMajor(), major);
  }

  @Test
  void replicaIsInRecoveryPrimaryIsNot() throws SQLException {
    assertEquals("f", Db.one(cluster, primary, "SELECT pg_is_in_recovery()"));
    assertEquals("t", Db.one(cluster, replica, "SELECT pg_is_in_recovery()"));
    assertTrue(Db.streaming(cluster, replica));
  }

  @Test
  void rowCommittedOnPrimaryBecomesVisibleOnReplica() throws SQLException {
    Db.exec(cluster, primary, "CREATE TABLE visible_t (id int PRIMARY KEY, v text)");
    Db.exec(cluster, primary, "INSERT INTO visible_t VALUES (1, 'one')");
    Db.await(DEADLINE, "row 1 on the replica",
        () -> "one".equals(Db.one(cluster, replica, "SELECT v FROM visible_t WHERE id = 1")));

    // awaitCaughtUp alone is enough: right after it the row must be there, no polling.
    Db.exec(cluster, primary, "INSERT INTO visible_t VALUES (2, 'two')");
    cluster.awaitCaughtUp(replica);
    assertEquals("two", Db.one(cluster, replica, "SELECT v FROM visible_t WHERE id = 2"));

    SQLException readOnly = assertThrows(SQLException.class,
        () -> Db.exec(cluster, replica, "INSERT INTO visible_t VALUES (3, 'three')"));
    assertEquals("25006", readOnly.getSQLState());
  }

  @Test
  void pausedReplayMakesHeartbeatAgeGrowAndResumeBringsItBack() throws Exception {
    Db.exec(cluster, primary,
        "CREATE TABLE heartbeat_t (id int PRIMARY KEY, beat_at timestamptz NOT NULL)");
    Db.exec(cluster, primary, "INSERT INTO heartbeat_t VALUES (1, clock_timestamp())");
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicReference<Throwable> writerFailure = new AtomicReference<>();
    Thread writer = new Thread(() -> {
      try (Connection c = cluster.connect(primary); Statement s = c.createStatement()) {
        while (running.get()) {
          s.executeUpdate("UPDATE heartbeat_t SET beat_at = clock_timestamp() WHERE id = 1");
          Thread.sleep(100); // the writer's cadence, not a wait for a condition
        }
      } catch (Throwable t) {
        writerFailure.set(t);
      }
    }, "heartbeat-writer");
    writer.start();
    try {
      String age = "SELECT extract(epoch from now() - beat_at) FROM heartbeat_t WHERE id = 1";
      Db.await(DEADLINE, "a fresh heartbeat on the replica",
          () -> parse(Db.one(cluster, replica, age)) < 1.0);

      cluster.pauseReplay(replica);
      Db.await(DEADLINE, "the heartbeat age to pass 1.5 s while replay is paused",
          () -> parse(Db.one(cluster, replica, age)) > 1.5);
      assertThrows(PgSandboxException.class,
          () -> cluster.awaitCaughtUp(replica, Duration.ofMillis(300)),
          "a paused replica cannot catch up");

      cluster.resumeReplay(replica);
      cluster.awaitCaughtUp(replica);
      Db.await(DEADLINE, "the heartbeat age to drop below 1 s after resume",
          () -> parse(Db.one(cluster, replica, age)) < 1.0);
    } finally {
      running.set(false);
      writer.join(10_000);
      cluster.resumeReplay(replica);
    }
    assertNull(writerFailure.get());
  }

  @Test
  void truncateOnPrimaryCancelsReplicaTransactionWith40001() throws Exception {
    cluster.setConflictDelay(replica, Duration.ofMillis(100));
    Db.exec(cluster, primary,
        "CREATE TABLE conflict_t AS SELECT g AS id FROM generate_series(1, 10) g");
    cluster.awaitCaughtUp(replica);
    try (Connection c = cluster.connect(replica)) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      assertEquals(10, count(c));

      Db.exec(cluster, primary, "TRUNCATE conflict_t");
      AtomicReference<SQLException> failure = new AtomicReference<>();
      Db.await(DEADLINE, "the replica transaction to be cancelled by recovery", () -> {
        try {
          count(c);
          return false;
        } catch (SQLException e) {
          failure.set(e);
          return true;
        }
      });
      assertEquals("40001", failure.get().getSQLState(), String.valueOf(failure.get()));
    }
    cluster.awaitCaughtUp(replica);
    assertEquals("0", Db.one(cluster, replica, "SELECT count(*) FROM conflict_t"));
  }

  @Test
  void logsHaveAHeaderPerNode() {
    String logs = cluster.logs();
    assertTrue(logs.contains("===== primary (" + primary.hostPort()), logs);
    assertTrue(logs.contains("===== replica1 (" + replica.hostPort()), logs);
    assertTrue(logs.contains("database system is ready to accept"), logs);
    assertFalse(cluster.isClosed());
  }

  private static int count(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM conflict_t")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static double parse(String seconds) {
    return seconds == null ? Double.MAX_VALUE : Double.parseDouble(seconds);
  }
}
