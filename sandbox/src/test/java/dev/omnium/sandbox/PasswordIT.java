package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** requirePasswords: SCRAM over TCP, replicas authenticate too; extra settings reach every node. */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(120)
class PasswordIT {

  private static PgCluster cluster;

  @BeforeAll
  static void start() {
    cluster = PgCluster.builder().requirePasswords(true).setting("max_connections", "50").start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void wrongPasswordIsRefusedRightOneWorksOnEveryNode() throws SQLException {
    assertNotNull(cluster.password());
    for (PgNode node : List.of(cluster.primary(), cluster.replica(0))) {
      SQLException refused = assertThrows(SQLException.class,
          () -> open(node, cluster.password() + "x").close());
      assertEquals("28P01", refused.getSQLState(), String.valueOf(refused));
      SQLException none = assertThrows(SQLException.class, () -> open(node, null).close());
      assertTrue(none.getMessage().contains("password"), none.getMessage());
      try (Connection c = open(node, cluster.password())) {
        assertTrue(c.isValid(5));
      }
      try (Connection c = cluster.connect(node)) {
        assertTrue(c.isValid(5));
      }
    }
  }

  @Test
  void replicaAuthenticatesForStreaming() throws SQLException {
    assertTrue(Db.streaming(cluster, cluster.replica(0)));
    Db.exec(cluster, cluster.primary(), "CREATE TABLE pw_t AS SELECT 7 AS n");
    cluster.awaitCaughtUp(cluster.replica(0));
    assertEquals("7", Db.one(cluster, cluster.replica(0), "SELECT n FROM pw_t"));
  }

  @Test
  void extraSettingsApplyToEveryNode() throws SQLException {
    assertEquals("50", Db.one(cluster, cluster.primary(), "SHOW max_connections"));
    assertEquals("50", Db.one(cluster, cluster.replica(0), "SHOW max_connections"));
    assertEquals("scram-sha-256", Db.one(cluster, cluster.primary(), "SHOW password_encryption"));
  }

  @Test
  void logsNeverContainThePassword() {
    assertTrue(!cluster.logs().contains(cluster.password()));
    assertTrue(!cluster.toString().contains(cluster.password()));
  }

  private static Connection open(PgNode node, String password) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", cluster.user());
    if (password != null) {
      p.setProperty("password", password);
    }
    return DriverManager.getConnection(node.jdbcUrl(), p);
  }
}
