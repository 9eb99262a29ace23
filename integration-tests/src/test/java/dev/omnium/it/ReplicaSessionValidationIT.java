package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * omnium's replica pool does not ask the server whether an idle session is alive before lending
 * it (the lag watcher's probes stand in for that round trip). A session the server ended while it
 * sat in the pool must then still cost the application nothing: its read is retried on the
 * fallback route, the dead session is evicted, and later reads return to the replica.
 */
class ReplicaSessionValidationIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE rsv (id int PRIMARY KEY)", "INSERT INTO rsv VALUES (1)").build();

  static Where read(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT (SELECT count(*) FROM rsv), " + Where.COLUMNS); ResultSet rs = ps.executeQuery()) {
      assertTrue(rs.next());
      assertEquals(1, rs.getInt(1), "the row is read");
      return Where.from(rs);
    }
  }

  @Test
  void aReplicaSessionEndedWhileIdleInThePoolIsReplacedWithoutAnError() throws Exception {
    endedWhileIdle("rsv", c -> { });
  }

  /**
   * Issue 32, item 5: the same with logical state applied to each session bound (a JDBC setter,
   * a SQL setting): applying it is the first thing to meet the ended session, and the read is
   * still retried on the fallback route, transparently.
   */
  @Test
  void aReplicaSessionEndedWhileIdleIsReplacedWhateverStateTheConnectionApplies() throws Exception {
    endedWhileIdle("rsv-isolation",
        c -> c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ));
    endedWhileIdle("rsv-schema", c -> c.setSchema("public"));
    endedWhileIdle("rsv-sql", c -> {
      try (java.sql.Statement st = c.createStatement()) {
        st.execute("SET search_path TO public");
      }
    });
  }

  /** Something a test does to the logical connection before its session is ended. */
  interface Setup {
    void apply(Connection c) throws SQLException;
  }

  private static void endedWhileIdle(String app, Setup setup) throws Exception {
    String url = SANDBOX.url(app, "maxAge=120s&heartbeatInterval=100ms&replicaPoolSize=1");
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      setup.apply(c);
      Poll.until(Duration.ofSeconds(20), "reads on the replica", () -> read(c).inRecovery());
      int pid = read(c).pid(); // autocommit: the session went back to the pool with the statement
      long retries = RouterBean.of(app).getRetries();

      try (Connection admin = SANDBOX.cluster().connect(SANDBOX.replica());
           PreparedStatement kill = admin.prepareStatement("SELECT pg_terminate_backend(?)")) {
        kill.setInt(1, pid);
        kill.executeQuery().close();
      }
      Poll.until(Duration.ofSeconds(10), "the session gone on the replica", () ->
          "0".equals(SANDBOX.queryOne(SANDBOX.replica(),
              "SELECT count(*) FROM pg_stat_activity WHERE pid = ?", pid)));
      Poll.pause(600); // idle past HikariCP's 500 ms validation bypass window

      Where after = read(c); // must not throw
      assertNotEquals(pid, after.pid(), "not the ended session");
      assertEquals(retries + 1, RouterBean.of(app).getRetries(), "retried once");
      Poll.until(Duration.ofSeconds(20), "reads back on a new replica session", () -> {
        Where w = read(c);
        return w.inRecovery() && w.pid() != pid;
      });
    }
  }
}
