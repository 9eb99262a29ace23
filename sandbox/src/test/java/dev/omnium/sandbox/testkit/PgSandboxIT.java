package dev.omnium.sandbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The test kit itself: the cluster it starts, the URLs it builds, its stop. */
class PgSandboxIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE kit_items (id int PRIMARY KEY)", "INSERT INTO kit_items VALUES (1)")
      .build();

  @Test
  void theSetupSqlHasReachedTheReplicaBeforeTheFirstTest() throws Exception {
    assertEquals("1", SANDBOX.queryOne(SANDBOX.replica(), "SELECT count(*) FROM kit_items"));
    assertEquals("t", SANDBOX.queryOne(SANDBOX.replica(), "SELECT pg_is_in_recovery()"));
  }

  @Test
  void theHeartbeatKeepsUpdatingItsRowOnThePrimary() throws Exception {
    String first = SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT beat_at FROM replica_heartbeat WHERE id = 1");
    Poll.until(Duration.ofSeconds(10), "the heartbeat to beat again", () -> !first.equals(
        SANDBOX.queryOne(SANDBOX.primary(), "SELECT beat_at FROM replica_heartbeat WHERE id = 1")));
  }

  @Test
  void theUrlSendsReadsToTheReplicaAndWritesToThePrimary() throws Exception {
    String app = "kit";
    try (Connection c = DriverManager.getConnection(SANDBOX.url(app, "maxAge=5s"))) {
      Where write = Where.of(c);
      assertTrue(write.onPrimaryAs(app, SANDBOX.primary().port()), write.toString());
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(15), "a read on the replica", () -> Where.of(c).inRecovery());
      Where read = Where.of(c);
      assertEquals(SANDBOX.replica().port(), read.port());
      assertEquals(app + ":replica", read.applicationName());
    }
  }

  @Test
  void aStoppedSandboxStopsItsServersAndSaysSoWhenUsed() throws Exception {
    PgSandbox other = PgSandbox.builder().replicas(0).withoutHeartbeat().build();
    other.start();
    PgCluster cluster = other.cluster();
    String url = other.primaryUrl("kitstop", null);
    assertTrue(url.startsWith("jdbc:omnium:postgresql://" + cluster.primary().hostPort()
        + "/omnium?applicationName=kitstop&user=postgres"), url);
    other.stop();
    assertTrue(cluster.isClosed());
    assertThrows(IllegalStateException.class, other::cluster);
    other.stop(); // idempotent
  }
}
