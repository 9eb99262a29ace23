package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.it.reliability.Figures;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 30, item 2: when the server refuses every connect of a route (here: the role's password
 * changed on the server after the pools started), a read or write that needs a new session of
 * that route fails at once with the server's SQLState and message, the same as pgjdbc's connect
 * gets, instead of after {@code poolTimeout}; only a server that does not answer costs the wait.
 * The fallback route and the DataSource mode's primary pool alike; the refusal is not kept: once
 * the server accepts again, so does the route. The last test stops the primary.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RefusedRoutesIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).requirePasswords().build();
  static final long POOL_TIMEOUT_MS = 10_000;
  static final String KEYS = "heartbeatInterval=200ms&maxAge=2s&fallbackPoolSize=2&poolTimeout="
      + POOL_TIMEOUT_MS + "ms";
  static final Figures FIGURES = new Figures("refused-routes-pg" + System.getProperty(
      "omnium.pg.version", "18"));

  @AfterEach
  void shutdownRouters() {
    OmniumDriver.shutdown();
  }

  @AfterAll
  static void report() {
    FIGURES.report();
  }

  /** The password changes on the server and every session of the role ends: pools must refill. */
  static void changePasswordOnServer(String role, String password) throws SQLException {
    TrustFixtures.setPassword(SANDBOX, role, password);
    TrustFixtures.terminate(SANDBOX, role);
  }

  /** What pgjdbc's own connect with the same stale password reports. */
  static ConnectOutcome pgjdbcWith(String role, String password) {
    return ConnectOutcome.of(() -> DriverManager.getConnection(SANDBOX.pgjdbcUrlAs(
        SANDBOX.primary(), role, password, "oracle", null)));
  }

  /** Runs one statement and reports how it failed (or that it did not) like a connect. */
  static ConnectOutcome statement(Connection c, boolean readOnly) {
    return ConnectOutcome.of(() -> {
      c.setReadOnly(readOnly);
      try (Statement st = c.createStatement()) {
        st.execute("SELECT 1");
      }
      return () -> { };
    });
  }

  /** getConnection() and one statement, reported like a connect. */
  static ConnectOutcome unitOfWork(OmniumDataSource ds, boolean readOnly) {
    return ConnectOutcome.of(() -> {
      try (Connection c = ds.getConnection()) {
        c.setReadOnly(readOnly);
        try (Statement st = c.createStatement()) {
          st.execute("SELECT 1");
        }
      }
      return () -> { };
    });
  }

  @Test
  @Order(1)
  void aRefusedFallbackFailsAtOnceWithTheServersErrorInDataSourceMode() throws Exception {
    TrustFixtures.role(SANDBOX, "dsf", "pw-1");
    // no replica: every read takes the fallback route
    OmniumDataSource ds = new OmniumDataSource(SANDBOX.cluster().primary().jdbcUrl()
        .replace("jdbc:", "jdbc:omnium:") + "?applicationName=dsfall&user=dsf&" + KEYS);
    ds.setPassword("pw-1");
    try {
      try (Connection c = ds.read()) {
        assertFalse(Where.of(c).inRecovery());
      }
      changePasswordOnServer("dsf", "pw-2");
      ConnectOutcome pg = pgjdbcWith("dsf", "pw-1");
      // getConnection() may already refuse (a login of the data source's was refused: the next
      // connection logs in first) or the statement does: either way at once, as pgjdbc
      ConnectOutcome read = unitOfWork(ds, true);
      read.assertSameFailureAs(pg, "a read whose fallback connects are refused");
      assertTrue(read.millis() < POOL_TIMEOUT_MS / 2, "failed after " + read.millis()
          + " ms: a refusal must not wait for poolTimeout (" + POOL_TIMEOUT_MS + " ms)");
      FIGURES.put("refusedFallbackReadMs", read.millis());
      ConnectOutcome write = unitOfWork(ds, false);
      write.assertSameFailureAs(pg, "a write whose primary pool's connects are refused");
      assertTrue(write.millis() < POOL_TIMEOUT_MS / 2, "failed after " + write.millis()
          + " ms: a refusal must not wait for poolTimeout (" + POOL_TIMEOUT_MS + " ms)");
      FIGURES.put("refusedPrimaryPoolWriteMs", write.millis());
      // The server accepts the data source's password again: so do its routes.
      SANDBOX.execOnPrimary("ALTER ROLE dsf PASSWORD 'pw-1'");
      Poll.until(Duration.ofSeconds(20), "reads and writes to work again",
          () -> unitOfWork(ds, true).connected() && unitOfWork(ds, false).connected());
    } finally {
      ds.close();
    }
  }

  @Test
  @Order(2)
  void aRefusedFallbackFailsAtOnceInDriverModeToo() throws Exception {
    TrustFixtures.role(SANDBOX, "drf", "pw-1");
    String url = SANDBOX.urlAs("drf", null, "drfall", KEYS);
    try (Connection open = DriverManager.getConnection(url, "drf", "pw-1")) {
      Poll.until(Duration.ofSeconds(20), "a read", () -> statement(open, true).connected());
      changePasswordOnServer("drf", "pw-2");
      ConnectOutcome pg = pgjdbcWith("drf", "pw-1");
      // the replica's sessions are refused too: reads take the fallback route, whose are refused
      Poll.until(Duration.ofSeconds(10), "the replica to be left for the fallback route",
          () -> !SANDBOX.cluster().isInRecovery(SANDBOX.primary())
              && "UNREACHABLE".equals(replicaState("drfall")));
      ConnectOutcome read = statement(open, true);
      read.assertSameFailureAs(pg, "a driver-mode read whose fallback connects are refused");
      assertTrue(read.millis() < POOL_TIMEOUT_MS / 2, "failed after " + read.millis() + " ms");
      FIGURES.put("refusedFallbackReadDriverMs", read.millis());
    }
  }

  @Test
  @Order(3)
  void aServerThatIsDownStillCostsPoolTimeout() throws Exception {
    String app = "downfall";
    OmniumDataSource ds = new OmniumDataSource(SANDBOX.primaryUrl(app, KEYS.replace(
        "poolTimeout=" + POOL_TIMEOUT_MS + "ms", "poolTimeout=2s")));
    try {
      try (Connection c = ds.read()) {
        assertFalse(Where.of(c).inRecovery());
      }
      SANDBOX.cluster().stop(SANDBOX.primary(), false);
      try (Connection c = ds.getConnection()) {
        ConnectOutcome read = statement(c, true);
        assertFalse(read.connected(), "a read on a stopped primary");
        assertTrue(read.millis() >= 1_900, "a server that is down may come back within"
            + " poolTimeout: the read waits for it (" + read + ")");
        FIGURES.put("downPrimaryReadMs", read.millis());
      }
    } finally {
      ds.close();
      SANDBOX.cluster().start(SANDBOX.primary());
    }
  }

  /** The router's one replica state, as JMX shows it. */
  static String replicaState(String app) throws Exception {
    return RouterBean.of(app).getReplicaStates().values().iterator().next();
  }
}
