package dev.omnium.fw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * DRIVER BUG reproductions found while putting the driver under frameworks. Each test states what plain
 * pgjdbc does; it is disabled until the driver is fixed (remove {@code @Disabled} to reproduce).
 */
@ExtendWith(PgClusterLogsOnFailure.class)
class DriverBugsIT {
  static Sandbox sandbox;

  /** An ordinary ERROR with SQLState 0A000 (feature_not_supported) on any server and route. */
  static final String FEATURE_NOT_SUPPORTED = "SELECT count(*) FROM pg_class FOR UPDATE";

  @BeforeAll
  static void up() throws Exception {
    sandbox = Sandbox.start();
  }

  @AfterAll
  static void down() throws Exception {
    if (sandbox != null) sandbox.close();
  }

  /**
   * DRIVER BUG: HikariCP (omnium's internal replica, fallback and DataSource-mode primary pools) treats
   * SQLState 0A000 as a broken connection and closes its proxy; omnium keeps that closed proxy bound, so
   * the logical connection's rollback() (and any later statement of the unit of work) fails with
   * "Connection is closed". With plain pgjdbc the ERROR leaves the session usable and rollback() succeeds.
   * Spring turns this into TransactionSystemException "JDBC rollback failed", masking the real error.
   */
  @Test
  @Disabled("DRIVER BUG (issue 8 report): rollback after a 0A000 error on a pooled route")
  void rollbackAfterA0A000ErrorOnAPooledRoute() throws Exception {
    String url = sandbox.omniumUrl("bug0a000", "heartbeatInterval=200ms") + "&user=" + sandbox.cluster.user();
    // driver mode, read-only transaction (replica route, or the fallback pool: both are internal HikariCP pools)
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(15), "a read on the replica", () -> Where.of(c).inRecovery());
      c.setAutoCommit(false);
      assertEquals("0A000", failure(c).getSQLState());
      c.rollback(); // throws java.sql.SQLException: Connection is closed
      assertTrue(Where.of(c).inRecovery(), "the connection goes on with the next read-only transaction");
      c.commit();
    }
    // DataSource mode, read-write work on the internal primary pool
    try (OmniumDataSource ds = new OmniumDataSource(url + "&primaryPoolSize=1"); Connection c = ds.getConnection()) {
      assertEquals("0A000", failure(c).getSQLState());
      assertTrue(Where.of(c).port() == sandbox.primary().port(), "autocommit: the next statement just runs");
    }
  }

  /**
   * DRIVER BUG: pgjdbc's {@code options=-c search_path=…} and {@code currentSchema=…} pass through to the lag
   * watcher's connection too, which then looks up the unqualified default heartbeat table
   * ({@code replica_heartbeat}) in the application's schema, finds nothing (NO_HEARTBEAT_TABLE), and every
   * read goes to the fallback pool forever. Workaround: {@code heartbeatTable=public.replica_heartbeat}.
   * The watcher and heartbeat-writer sessions should not take the application's search_path.
   */
  @Test
  @Disabled("DRIVER BUG (issue 8 report): a search_path in the URL hides the heartbeat table")
  void searchPathInTheUrlHidesTheHeartbeatTable() throws Exception {
    sandbox.execOnPrimary("CREATE SCHEMA IF NOT EXISTS app");
    sandbox.awaitCaughtUp();
    for (String schemaSetting : new String[] {"options=-c%20search_path%3Dapp", "currentSchema=app"}) {
      String url = sandbox.omniumUrl("bugpath" + schemaSetting.length(), "heartbeatInterval=200ms")
          + "&user=" + sandbox.cluster.user() + "&" + schemaSetting;
      try (Connection c = DriverManager.getConnection(url)) {
        c.setReadOnly(true);
        Poll.until(Duration.ofSeconds(10), "a read on the replica with " + schemaSetting,
            () -> Where.of(c).inRecovery()); // times out: every read stays on the fallback route
      }
    }
  }

  /** The same with plain pgjdbc, for reference: passes. */
  @Test
  void plainPgjdbcKeepsTheSessionAfterA0A000Error() throws Exception {
    try (Connection c = sandbox.cluster.connect(sandbox.replica())) {
      c.setAutoCommit(false);
      assertEquals("0A000", failure(c).getSQLState());
      c.rollback();
      assertTrue(Where.of(c).inRecovery());
      c.commit();
    }
  }

  static SQLException failure(Connection c) {
    return assertThrows(SQLException.class, () -> {
      try (Statement st = c.createStatement()) {
        st.executeQuery(FEATURE_NOT_SUPPORTED);
      }
    });
  }
}
