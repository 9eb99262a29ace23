package dev.omnium.it.switchover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Sessions;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;

/**
 * When the sessions of a promoted standby learn of the promotion, and what omnium does with it.
 * PostgreSQL (14+) reports {@code in_hot_standby} only just before ReadyForQuery
 * (ReportChangedGUCOptions): an idle session hears nothing, the answer to its next command
 * carries it. So the first read on a replica session after a promotion runs on the new primary;
 * omnium raises the signal with that first answer, and no later read is lent a session of that
 * replica's pool, even while the first read's transaction is still open.
 */
class PromotionNoticeIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(2).build();

  @Test
  void anIdleSessionHearsOfThePromotionOnlyWithTheAnswerToItsNextCommand() throws Exception {
    PgCluster cluster = SANDBOX.cluster();
    PgNode standby = SANDBOX.replica(0);
    try (Connection idle = cluster.connect(standby)) {
      PGConnection pg = idle.unwrap(PGConnection.class);
      assertEquals("on", pg.getParameterStatus("in_hot_standby"));
      cluster.promote(standby); // returns once new sessions see the server out of recovery
      try (Connection late = cluster.connect(standby)) {
        assertEquals("off", late.unwrap(PGConnection.class).getParameterStatus("in_hot_standby"),
            "a session opened after the promotion hears it at login");
      }
      // For a second, drain whatever reached the idle session's socket (pgjdbc reads pending
      // messages without a round trip): nothing says the server is a primary now.
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      while (System.nanoTime() - end < 0) {
        pg.getNotifications();
        assertEquals("on", pg.getParameterStatus("in_hot_standby"),
            "the idle session was told of the promotion without a command");
        Poll.pause(50);
      }
      try (Statement st = idle.createStatement();
           ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
        rs.next();
        assertFalse(rs.getBoolean(1), "the command ran on the promoted server");
      }
      assertEquals("off", pg.getParameterStatus("in_hot_standby"),
          "the answer to the first command carries the promotion");
    }
  }

  @Test
  void theFirstAnswerAfterAPromotionStopsEveryLaterReadOnThatReplicaPool() throws Exception {
    PgCluster cluster = SANDBOX.cluster();
    PgNode standby = SANDBOX.replica(1);
    String app = "notice";
    // A long probe interval: the watcher must not be the one that notices the promotion here.
    String url = SANDBOX.primaryUrl(app, "replica=" + standby.hostPort()
        + "&heartbeatInterval=5s&maxAge=60s");
    try (Connection a = DriverManager.getConnection(url);
         Connection b = DriverManager.getConnection(url)) {
      a.setReadOnly(true);
      b.setReadOnly(true);
      Poll.until(Duration.ofSeconds(60), "reads on the standby", () ->
          Where.of(a).inRecovery() && Where.of(b).inRecovery());
      a.setAutoCommit(false);
      Where before = Where.of(a); // a read-only transaction on a session of the replica pool
      assertTrue(before.inRecovery());
      assertEquals(app + ":replica", before.applicationName());

      cluster.promote(standby);
      Where after = Where.of(a); // the same transaction: its next statement
      assertEquals(before.pid(), after.pid(), "a transaction keeps its session");
      assertFalse(after.inRecovery(), "the standby was promoted under the open transaction");

      // a's transaction is still open: its answer alone must have stopped the pool.
      Where other = Where.of(b);
      assertFalse(other.applicationName().endsWith(":replica") && !other.inRecovery(),
          "a later read ran on the new primary through its replica pool: " + other);
      assertEquals(app + ":fallback", other.applicationName(), other.toString());
      a.commit();
      Poll.until(Duration.ofSeconds(20), "no replica session left on the new primary", () ->
          Sessions.count(cluster, standby, app + ":replica") == 0);
    }
  }
}
