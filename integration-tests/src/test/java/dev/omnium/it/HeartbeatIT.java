package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.LagAlertListener;
import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The driver's own heartbeat writer (one elected holder, takeover) and the lag alert. */
class HeartbeatIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).withoutHeartbeat().build();

  static String url(String app, String extra) {
    return SANDBOX.url(app, "heartbeatWriter=true&heartbeatInterval=200ms&maxAge=1s"
        + (extra == null ? "" : "&" + extra));
  }

  static double heartbeatAgeOnPrimary() throws SQLException {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT count(*), extract(epoch FROM now() - max(beat_at)) FROM replica_heartbeat")) {
      rs.next();
      assertEquals(1, rs.getInt(1), "the heartbeat table holds exactly one row");
      return rs.getDouble(2);
    }
  }

  static int heartbeatRows() throws SQLException {
    return Integer.parseInt(
        SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM replica_heartbeat"));
  }

  static int advisoryLockHolders() throws SQLException {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
             + " WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'hb%:heartbeat'")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  static String leaderApp() throws SQLException {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT a.application_name, a.pid FROM pg_locks l JOIN pg_stat_activity a"
             + " ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'hb%:heartbeat'")) {
      return rs.next() ? rs.getString(1) + "#" + rs.getInt(2) : null;
    }
  }

  @Test
  void oneElectedWriterKeepsTheHeartbeatFreshAndAnotherTakesOver() throws Exception {
    List<OmniumDataSource> writers = new ArrayList<>();
    try {
      for (int i = 1; i <= 3; i++) {
        OmniumDataSource ds = new OmniumDataSource(url("hb" + i, "primaryPoolSize=1&replicaPoolSize=1&fallbackPoolSize=1"));
        ds.metrics(); // starts the router, and with it the writer
        writers.add(ds);
      }
      // The writer creates the table, then inserts its row: no row yet is "not yet", not a failure.
      Poll.until(Duration.ofSeconds(10), "a fresh heartbeat written by the driver",
          () -> heartbeatRows() > 0 && heartbeatAgeOnPrimary() < 1.0);
      Poll.until(Duration.ofSeconds(5), "exactly one writer", () -> advisoryLockHolders() == 1
          && writers.stream().filter(w -> isLeader(w)).count() == 1);

      // the table stays one row, updated in place
      Poll.until(Duration.ofSeconds(15), "HOT updates of the heartbeat row", () -> {
        try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'replica_heartbeat'")) {
          return rs.next() && rs.getLong(1) > 0;
        }
      });

      // kill the holder's session: another process takes over within about two intervals
      String leader = leaderApp();
      int pid = Integer.parseInt(leader.substring(leader.indexOf('#') + 1));
      try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary());
           PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
        ps.setInt(1, pid);
        ps.execute();
      }
      Duration takeover = Poll.until(Duration.ofSeconds(10), "another writer to take over", () -> {
        String now = leaderApp();
        return now != null && !now.equals(leader);
      });
      assertTrue(takeover.toMillis() < 3000, "takeover took " + takeover.toMillis() + " ms");
      Poll.until(Duration.ofSeconds(5), "the heartbeat to stay fresh", () -> heartbeatAgeOnPrimary() < 1.0);
      assertEquals(1, advisoryLockHolders());
    } finally {
      for (OmniumDataSource ds : writers) ds.close();
    }
    Poll.until(Duration.ofSeconds(5), "no writer left holding the lock", () -> advisoryLockHolders() == 0);
  }

  private static boolean isLeader(OmniumDataSource ds) {
    try {
      return ds.metrics().isHeartbeatLeader();
    } catch (SQLException e) {
      return false;
    }
  }

  @Test
  void routingWorksOnTheDriversOwnHeartbeatAndTheLagAlertFiresAndClears() throws Exception {
    List<String> events = new CopyOnWriteArrayList<>();
    try (OmniumDataSource ds = new OmniumDataSource(url("hbalert",
        "lagAlertThreshold=500ms&lagAlertAfter=1s&primaryPoolSize=1&replicaPoolSize=2"))) {
      ds.addLagAlertListener(new LagAlertListener() {
        @Override public void alertRaised(String replica, Duration lag, Duration over) { events.add("raised " + replica); }
        @Override public void alertCleared(String replica, Duration lag) { events.add("cleared " + replica); }
      });
      Poll.until(Duration.ofSeconds(15), "reads on the replica", () -> {
        try (OmniumConnection c = ds.read()) {
          return Where.of(c).inRecovery();
        }
      });
      assertTrue(events.isEmpty(), "no alert while healthy: " + events);
      SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
      try {
        Poll.until(Duration.ofSeconds(10), "reads on the fallback route", () -> {
          try (OmniumConnection c = ds.read()) {
            return !Where.of(c).inRecovery();
          }
        });
        Poll.until(Duration.ofSeconds(10), "the alert to fire", () -> ds.metrics().isLagAlert());
        assertEquals(List.of("raised " + SANDBOX.replica(0).hostPort()), events);
      } finally {
        SANDBOX.cluster().resumeReplay(SANDBOX.replica(0));
      }
      Poll.until(Duration.ofSeconds(10), "the alert to clear", () -> !ds.metrics().isLagAlert());
      assertEquals(List.of("raised " + SANDBOX.replica(0).hostPort(), "cleared " + SANDBOX.replica(0).hostPort()), events);
      Poll.until(Duration.ofSeconds(10), "reads back on the replica", () -> {
        try (OmniumConnection c = ds.read()) {
          return Where.of(c).inRecovery();
        }
      });
    }
  }
}
