package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.it.reliability.Figures;
import dev.omnium.it.reliability.LogCapture;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 30, item 3: a standby of another cluster, listed as a replica, is never fresh, however far
 * its replay position is ahead of the primary's: reads take the fallback route, and JMX, {@code
 * check} and one WARN line name the reason, FOREIGN_CLUSTER. The other cluster has a system
 * identifier of its own (its own initdb), and the heartbeat table a watcher needs.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
class ForeignClusterIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE whoami (name text)", "INSERT INTO whoami VALUES ('ours')").build();

  static final String INSERT_LSN = "SELECT pg_current_wal_insert_lsn()";

  @Test
  void aStandbyOfAnotherClusterIsNeverFresh() throws Exception {
    try (PgCluster other = PgCluster.builder().replicas(1).ownSystemIdentifier().start()) {
      assertNotEquals(SANDBOX.cluster().systemIdentifier(), other.systemIdentifier());
      PgNode foreign = other.replica(0);
      try (Connection c = other.connect(other.primary()); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE whoami (name text)");
        st.execute("INSERT INTO whoami VALUES ('theirs')");
        st.execute("CREATE TABLE replica_heartbeat (id int PRIMARY KEY CHECK (id = 1),"
            + " beat_at timestamptz NOT NULL)");
        st.execute("INSERT INTO replica_heartbeat VALUES (1, now())");
        // Ahead of our primary, so the replay position alone would call it fresh.
        long ours = TrustFixtures.lsn(SANDBOX.cluster(), SANDBOX.primary(), INSERT_LSN);
        while (TrustFixtures.lsn(other, other.primary(), INSERT_LSN) < ours + (8 << 20)) {
          st.execute("INSERT INTO whoami SELECT 'theirs' FROM generate_series(1, 1000)");
          st.execute("SELECT pg_switch_wal()");
        }
      }
      other.awaitCaughtUp(foreign);
      assertTrue(TrustFixtures.lsn(other, foreign, "SELECT pg_last_wal_replay_lsn()")
              > TrustFixtures.lsn(SANDBOX.cluster(), SANDBOX.primary(), INSERT_LSN),
          "the foreign standby's replay position is ahead of our primary's");

      String app = "foreign";
      int mark = LogCapture.mark();
      String url = SANDBOX.primaryUrl(app, "replica=" + foreign.hostPort()
          + "&heartbeatInterval=200ms&maxAge=5s");
      int theirs = 0;
      int reads = 20;
      String state;
      Long lag;
      try (Connection c = DriverManager.getConnection(url)) {
        c.setReadOnly(true);
        Poll.until(Duration.ofSeconds(10), "the watcher to judge the foreign standby",
            () -> !"STARTING".equals(RouterBean.of(app).getReplicaStates()
                .get(foreign.hostPort())));
        Poll.pause(1_000); // five more probes: a replica reported fresh would be used by now
        c.setAutoCommit(false);
        for (int i = 0; i < reads; i++) {
          try (Statement st = c.createStatement();
               ResultSet rs = st.executeQuery("SELECT name, inet_server_port() FROM whoami"
                   + " LIMIT 1")) {
            rs.next();
            if ("theirs".equals(rs.getString(1)) || rs.getInt(2) == foreign.port()) theirs++;
          }
          c.commit();
        }
        state = RouterBean.of(app).getReplicaStates().get(foreign.hostPort());
        lag = RouterBean.of(app).getEffectiveLagMillis().get(foreign.hostPort());
      }
      assertEquals(0, theirs, "read-only transactions answered by the other cluster's standby");
      assertEquals("FOREIGN_CLUSTER", state, "JMX ReplicaStates");
      assertEquals(-1L, lag, "effective lag unknown");
      assertTrue(TrustFixtures.oneWarning(mark, "FOREIGN_CLUSTER").contains(foreign.hostPort()));
      TrustFixtures.degradedCheckNaming(url, "FOREIGN_CLUSTER");
      new Figures("foreign-cluster-pg" + System.getProperty("omnium.pg.version", "18"))
          .put("reads", reads).put("readsServedByForeignStandby", theirs).report();
    }
  }
}
