package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** Roles that swap: promote a standby, rebuild the old primary as its standby, and back. */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(180)
class SwitchoverIT {

  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private PgCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private void check(boolean crash) throws SQLException {
    cluster = PgCluster.builder().start();
    PgNode a = cluster.primary();
    PgNode b = cluster.replica(0);
    Db.exec(cluster, a, "CREATE TABLE t (id int PRIMARY KEY)");
    Db.exec(cluster, a, "INSERT INTO t VALUES (1)");
    cluster.awaitCaughtUp(b);

    cluster.stop(a, crash);
    cluster.promote(b);
    assertEquals("f", Db.one(cluster, b, "SELECT pg_is_in_recovery()"));
    Db.exec(cluster, b, "INSERT INTO t VALUES (2)"); // the new primary takes writes

    cluster.rebuildAsStandby(a, b);
    assertEquals("t", Db.one(cluster, a, "SELECT pg_is_in_recovery()"));
    Db.exec(cluster, b, "INSERT INTO t VALUES (3)");
    Poll.until(DEADLINE, "row 3 on the rebuilt standby",
        () -> "3".equals(Db.one(cluster, a, "SELECT count(*) FROM t")));
    SQLException readOnly = assertThrows(SQLException.class,
        () -> Db.exec(cluster, a, "INSERT INTO t VALUES (4)"));
    assertEquals("25006", readOnly.getSQLState());

    // And back: the roles swap again with the same controls.
    cluster.stop(b, false);
    cluster.promote(a);
    Db.exec(cluster, a, "INSERT INTO t VALUES (5)");
    cluster.rebuildAsStandby(b, a);
    Poll.until(DEADLINE, "row 5 on the rebuilt standby",
        () -> "4".equals(Db.one(cluster, b, "SELECT count(*) FROM t")));
  }

  @Test
  void plannedSwitchoverAndBack() throws SQLException {
    check(false);
  }

  @Test
  void crashFailoverAndBack() throws SQLException {
    check(true);
  }
}
