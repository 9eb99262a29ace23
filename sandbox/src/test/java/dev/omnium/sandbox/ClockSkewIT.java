package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The clock-skew control: a node restarted under libfaketime shows a shifted clock and streams. */
@ExtendWith(PgClusterLogsOnFailure.class)
@Timeout(180)
class ClockSkewIT {

  private static PgCluster cluster;

  @BeforeAll
  static void start() {
    Assumptions.assumeTrue(FakeTime.available(),
        () -> "skipped: cannot shift a server's clock: " + FakeTime.unavailableReason());
    cluster = PgCluster.builder().replicas(1).start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Server clock minus this JVM's clock, in seconds, as the server reports it. */
  private static double offsetSeconds(PgNode node) throws SQLException {
    try (Connection c = cluster.connect(node); Statement st = c.createStatement()) {
      long before = System.currentTimeMillis();
      try (ResultSet rs = st.executeQuery("SELECT extract(epoch FROM clock_timestamp())::float8")) {
        rs.next();
        long after = System.currentTimeMillis();
        return rs.getDouble(1) - (before + after) / 2000.0;
      }
    }
  }

  @Test
  void aSkewedReplicaReportsTheShiftedClockAndKeepsStreaming() throws Exception {
    PgNode replica = cluster.replica(0);
    for (Duration d : new Duration[] {Duration.ofSeconds(30), Duration.ofSeconds(-3)}) {
      cluster.skewClock(replica, d);
      assertEquals(d, cluster.clockOffset(replica));
      double seen = offsetSeconds(replica);
      assertTrue(Math.abs(seen - d.toMillis() / 1000.0) < 1.0,
          "replica clock offset " + seen + " s, expected " + d);
      assertTrue(Math.abs(offsetSeconds(cluster.primary())) < 1.0, "the primary's clock moved");
      cluster.awaitStreaming(replica, Duration.ofSeconds(30));
      try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE IF NOT EXISTS skew_probe (id int)");
        st.execute("INSERT INTO skew_probe VALUES (1)");
      }
      cluster.awaitCaughtUp(replica);
      try (Connection c = cluster.connect(replica); Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT count(*), pg_is_in_recovery() FROM skew_probe")) {
        rs.next();
        assertTrue(rs.getLong(1) >= 1 && rs.getBoolean(2), "the skewed replica did not replay");
      }
    }
    cluster.skewClock(replica, Duration.ZERO);
    assertTrue(Math.abs(offsetSeconds(replica)) < 1.0, "the real clock did not come back");
  }

  @Test
  void theSpecIsASignedSecondCount() {
    assertEquals("+3.000", FakeTime.spec(Duration.ofSeconds(3)));
    assertEquals("-30.250", FakeTime.spec(Duration.ofMillis(-30_250)));
  }
}
