package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** One primary streaming to two replicas. */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(120)
class TwoReplicasIT {

  private static PgCluster cluster;

  @BeforeAll
  static void start() {
    cluster = PgCluster.builder().replicas(2).start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void primaryStreamsToBothReplicas() throws SQLException {
    List<PgNode> replicas = cluster.replicas();
    assertEquals(List.of("replica1", "replica2"), replicas.stream().map(PgNode::name).toList());
    assertEquals("2", Db.one(cluster, cluster.primary(),
        "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
            + " AND application_name IN ('replica1', 'replica2')"));
    Db.exec(cluster, cluster.primary(), "CREATE TABLE two_t AS SELECT 42 AS answer");
    for (PgNode r : replicas) {
      cluster.awaitCaughtUp(r);
      assertEquals("42", Db.one(cluster, r, "SELECT answer FROM two_t"));
      assertEquals("t", Db.one(cluster, r, "SELECT pg_is_in_recovery()"));
    }
    assertEquals("jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/omnium?replica="
        + replicas.get(0).hostPort() + "," + replicas.get(1).hostPort(), cluster.omniumUrl());
  }

  @Test
  void pausingOneReplicaLeavesTheOtherFresh() throws SQLException {
    PgNode paused = cluster.replica(0);
    PgNode fresh = cluster.replica(1);
    Db.exec(cluster, cluster.primary(), "CREATE TABLE pause_t (id int)");
    cluster.awaitCaughtUp(paused);
    cluster.pauseReplay(paused);
    try {
      Db.exec(cluster, cluster.primary(), "INSERT INTO pause_t VALUES (1)");
      cluster.awaitCaughtUp(fresh);
      assertEquals("1", Db.one(cluster, fresh, "SELECT count(*) FROM pause_t"));
      assertEquals("0", Db.one(cluster, paused, "SELECT count(*) FROM pause_t"));
    } finally {
      cluster.resumeReplay(paused);
    }
    cluster.awaitCaughtUp(paused);
    assertTrue("1".equals(Db.one(cluster, paused, "SELECT count(*) FROM pause_t")));
  }
}
