package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.it.reliability.Figures;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import dev.omnium.sandbox.testkit.Where;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * the server accepts again, so does the route. Refused background logins back off. The last
 * test stops the primary.
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

  /**
   * The password changes on the server while a router sits idle (its connection closed, the
   * router kept for {@code routerIdleTimeout}): its background sessions (the replica's lag
   * watcher, the primary's WAL sampler) must log in again and are refused. Each waits twice as
   * long after each refusal in a row (2, 4, ... up to 64 intervals), not one interval: every
   * process of a fleet trying a stale password every interval floods the servers' logs and
   * locks the account where the authentication counts failures (LDAP, PAM). Once the server
   * accepts the password again, the watcher measures the replica again.
   */
  @Test
  @Order(3)
  void refusedBackgroundLoginsBackOff() throws Exception {
    TrustFixtures.role(SANDBOX, "bgr", "pw-1");
    String app = "bgrefused";
    long interval = 100;
    String url = SANDBOX.urlAs("bgr", null, app, "heartbeatInterval=" + interval + "ms&maxAge=2s");
    try (Connection c = DriverManager.getConnection(url, "bgr", "pw-1")) {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(20), "a read on the replica",
          () -> Where.of(c).inRecovery());
    }
    Path primaryLog = SANDBOX.primary().logFile();
    Path replicaLog = SANDBOX.replica().logFile();
    long primaryFrom = Files.size(primaryLog);
    long replicaFrom = Files.size(replicaLog);
    changePasswordOnServer("bgr", "pw-2");
    long window = 60 * interval;
    Poll.pause(window);
    int refused = refusedLogins(primaryLog, primaryFrom, "bgr")
        + refusedLogins(replicaLog, replicaFrom, "bgr");
    FIGURES.put("refusedBackgroundLoginsIn60Intervals", refused);
    // two sessions refused every interval make about 120 in 60 intervals; backing off, each
    // tries at 0, 2, 6, 14, 30 and 62 intervals: 10 in all, with room for the pools' refills
    assertTrue(refused >= 2, "the background sessions logged in again and were refused: "
        + refused + " refusals logged");
    assertTrue(refused <= 30, refused + " refused logins of the background sessions in "
        + window + " ms (interval " + interval + " ms): they must back off");
    SANDBOX.execOnPrimary("ALTER ROLE bgr PASSWORD 'pw-1'");
    SANDBOX.awaitCaughtUp();
    Poll.until(Duration.ofSeconds(20), "the watcher to measure the replica again",
        () -> "OK".equals(replicaState(app)));
  }

  /** Logins the server refused for {@code role}'s password since {@code from} in its log. */
  static int refusedLogins(Path log, long from, String role) throws IOException {
    String needle = "password authentication failed for user \"" + role + "\"";
    byte[] all = Files.readAllBytes(log);
    String text = new String(all, (int) Math.min(from, all.length), all.length
        - (int) Math.min(from, all.length), StandardCharsets.UTF_8);
    int n = 0;
    for (int at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) n++;
    return n;
  }

  @Test
  @Order(4)
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
