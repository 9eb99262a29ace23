package dev.omnium.fw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Regressions for driver bugs found while putting the driver under frameworks. Each test states what
 * plain pgjdbc does; the driver must do the same.
 */
class DriverBugsIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();

  /** An ordinary ERROR with SQLState 0A000 (feature_not_supported) on any server and route. */
  static final String FEATURE_NOT_SUPPORTED = "SELECT count(*) FROM pg_class FOR UPDATE";

  @BeforeAll
  static void up() throws Exception {
  }

  @AfterAll
  static void down() throws Exception {
  }

  /**
   * Was a bug: HikariCP (omnium's internal replica, fallback and DataSource-mode primary pools) treats
   * SQLState 0A000 as a broken connection and closes its proxy; omnium keeps that closed proxy bound, so
   * the logical connection's rollback() (and any later statement of the unit of work) fails with
   * "Connection is closed". With plain pgjdbc the ERROR leaves the session usable and rollback() succeeds.
   * Spring turns this into TransactionSystemException "JDBC rollback failed", masking the real error.
   * Fixed: the internal pools evict only sessions that are really gone.
   */
  /** A read-only connection of {@code url} once its reads run on the replica. */
  static Connection readingOnReplica(String url) throws Exception {
    Connection c = DriverManager.getConnection(url);
    try {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(15), "a read on the replica", () -> Where.of(c).inRecovery());
      return c;
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
  }

  @Test
  void rollbackAfterA0A000ErrorOnAPooledRoute() throws Exception {
    String url = SANDBOX.url("bug0a000", "heartbeatInterval=200ms");
    // driver mode, read-only transaction (replica route, or the fallback pool: both are internal HikariCP pools)
    try (Connection c = readingOnReplica(url)) {
      c.setAutoCommit(false);
      assertEquals("0A000", failure(c).getSQLState());
      c.rollback(); // throws java.sql.SQLException: Connection is closed
      assertTrue(Where.of(c).inRecovery(), "the connection goes on with the next read-only transaction");
      c.commit();
    }
    // DataSource mode, read-write work on the internal primary pool
    try (OmniumDataSource ds = new OmniumDataSource(url + "&primaryPoolSize=1"); Connection c = ds.getConnection()) {
      assertEquals("0A000", failure(c).getSQLState());
      assertTrue(Where.of(c).port() == SANDBOX.primary().port(), "autocommit: the next statement just runs");
    }
  }

  /**
   * Was a bug: pgjdbc's {@code options=-c search_path=…} and {@code currentSchema=…} pass through to the lag
   * watcher's connection too, which then looks up the unqualified default heartbeat table
   * ({@code replica_heartbeat}) in the application's schema, finds nothing (NO_HEARTBEAT_TABLE), and every
   * read goes to the fallback pool forever. Workaround: {@code heartbeatTable=public.replica_heartbeat}.
   * Fixed: the watcher and heartbeat-writer sessions use search_path=public, so an unqualified
   * heartbeat table means public.replica_heartbeat whatever the application's search_path.
   */
  @Test
  void searchPathInTheUrlHidesTheHeartbeatTable() throws Exception {
    SANDBOX.execOnPrimary("CREATE SCHEMA IF NOT EXISTS app");
    SANDBOX.awaitCaughtUp();
    for (String schemaSetting : new String[] {"options=-c%20search_path%3Dapp", "currentSchema=app"}) {
      String url = SANDBOX.url("bugpath" + schemaSetting.length(),
          "heartbeatInterval=200ms&" + schemaSetting);
      try (Connection c = DriverManager.getConnection(url)) {
        c.setReadOnly(true);
        Poll.until(Duration.ofSeconds(10), "a read on the replica with " + schemaSetting,
            () -> Where.of(c).inRecovery()); // times out: every read stays on the fallback route
      }
    }
  }

  /** PostgreSQL refuses serializable transactions on a standby (0A000): those reads take the fallback route. */
  @Test
  void serializableReadOnlyTransactionsRunOnTheFallbackRoute() throws Exception {
    String url = SANDBOX.url("serializable", "heartbeatInterval=200ms");
    try (Connection c = readingOnReplica(url)) {
      c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      c.setAutoCommit(false);
      Where w = Where.of(c);
      assertTrue(!w.inRecovery(), "served by the primary");
      assertEquals("serializable:fallback", w.applicationName());
      c.commit();
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      assertTrue(Where.of(c).inRecovery(), "back to the replica at read committed");
      c.commit();
    }
  }

  /** The same with plain pgjdbc, for reference: passes. */
  @Test
  void plainPgjdbcKeepsTheSessionAfterA0A000Error() throws Exception {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.replica())) {
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
