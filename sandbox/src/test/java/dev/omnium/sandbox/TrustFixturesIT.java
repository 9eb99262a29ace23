package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;

/**
 * The fixtures of issue 30's suites: a TLS cluster whose certificates were made at start (pgjdbc's
 * verify-full accepts it with its authority, refuses it with another, finds no pg_hba.conf entry
 * without TLS, and the standby streams over TLS); a cluster of its own system identifier; and an
 * asynchronous failover that leaves a standby with a lost row on the abandoned timeline.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(240)
class TrustFixturesIT {

  private static Connection open(PgCluster c, String extra) throws SQLException {
    return DriverManager.getConnection(c.primary().jdbcUrl() + "?user=postgres&password="
        + c.password() + "&" + extra);
  }

  @Test
  void aTlsClusterIsVerifiedWithItsOwnAuthorityOnly() throws SQLException {
    try (PgCluster c = PgCluster.builder().requirePasswords(true).tls().start()) {
      try (Connection ok = open(c, c.tls().verifyFull())) {
        assertEquals("t", Db.one(c, c.primary(), "SELECT ssl FROM pg_stat_ssl WHERE pid = "
            + ok.unwrap(PGConnection.class).getBackendPID()), "the session is encrypted");
      }
      SQLException wrongCa = assertThrows(SQLException.class,
          () -> open(c, c.tls().verifyFullWithWrongRoot()).close());
      assertEquals("08006", wrongCa.getSQLState());
      assertTrue(wrongCa.getMessage().contains("PKIX"), wrongCa.getMessage());
      SQLException plain = assertThrows(SQLException.class,
          () -> open(c, "sslmode=disable").close());
      assertEquals("28000", plain.getSQLState());
      assertTrue(plain.getMessage().contains("no pg_hba.conf entry"), plain.getMessage());
      assertTrue(Db.streaming(c, c.replica(0)), "the standby streams over TLS");
    }
  }

  @Test
  void aClusterOfItsOwnHasAnotherSystemIdentifier() throws SQLException {
    try (PgCluster shared = PgCluster.builder().replicas(0).start();
         PgCluster own = PgCluster.builder().replicas(1).ownSystemIdentifier().start()) {
      assertNotEquals(shared.systemIdentifier(), own.systemIdentifier());
      assertTrue(Db.streaming(own, own.replica(0)));
    }
  }

  @Test
  void anAsyncFailoverLeavesAStandbyWithTheLostRowOnTheOldTimeline() throws SQLException {
    try (PgCluster c = PgCluster.builder().replicas(2).start()) {
      Db.exec(c, c.primary(), "CREATE TABLE ids (id int PRIMARY KEY)");
      Db.exec(c, c.primary(), "INSERT INTO ids VALUES (1)");
      c.awaitCaughtUp(c.replica(0));
      c.awaitCaughtUp(c.replica(1));
      c.asyncFailover(c.replica(0), c.replica(1), "INSERT INTO ids VALUES (2)");
      Db.exec(c, c.replica(0), "INSERT INTO ids VALUES (3)");
      String ids = "SELECT string_agg(id::text, ',' ORDER BY id) FROM ids";
      String timeline = "SELECT timeline_id FROM pg_control_checkpoint()";
      assertEquals("1,3", Db.one(c, c.replica(0), ids), "the new primary lost row 2");
      assertEquals("1,2", Db.one(c, c.replica(1), ids), "the standby left behind has it");
      assertEquals("t", Db.one(c, c.replica(1), "SELECT pg_is_in_recovery()"));
      assertEquals("1", Db.one(c, c.replica(1), timeline));
      assertEquals("2", Db.one(c, c.replica(0), "SELECT ('x' || substr(pg_walfile_name("
          + "pg_current_wal_insert_lsn()), 1, 8))::bit(32)::int"));
      c.rebuildAsStandby(c.replica(1), c.replica(0));
      Db.await(Duration.ofSeconds(30), "the rebuilt standby to show the new primary's rows",
          () -> "1,3".equals(Db.one(c, c.replica(1), ids)));
      assertEquals("2", Db.one(c, c.replica(1), timeline));
    }
  }
}
