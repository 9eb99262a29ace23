package dev.omnium.fw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Flyway (its own API, as a build step or an application's start-up would call it) migrating through a
 * {@code jdbc:omnium:} URL: every migration and Flyway's advisory lock on the primary, the schema then on the replica.
 */
class FlywayIT {
  static final String APP = "flyway";
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static MigrateResult result;
  static OmniumDataSource dataSource;

  @BeforeAll
  static void up() throws Exception {
    // Exactly the configuration docs/frameworks.md gives for Flyway: a DataSource, not a URL (see below).
    dataSource = new OmniumDataSource(SANDBOX.bareUrl(APP, "heartbeatInterval=200ms&primaryPoolSize=2"));
    dataSource.setUser(SANDBOX.cluster().user());
    Flyway flyway = Flyway.configure()
        .dataSource(dataSource)
        .locations("classpath:db/flyway")
        .baselineOnMigrate(true).baselineVersion("0") // the database already holds replica_heartbeat
        .load();
    result = flyway.migrate();
  }

  @AfterAll
  static void down() throws Exception {
    if (dataSource != null) dataSource.close();
  }

  /**
   * Documented limitation: Flyway's URL configuration (and so its CLI and Maven/Gradle plugins) picks a
   * database plugin from the URL prefix and knows no {@code jdbc:omnium:}; give it a DataSource instead.
   */
  @Test
  void flywaysOwnUrlConfigurationDoesNotKnowJdbcOmnium() {
    FlywayException e = assertThrows(FlywayException.class, () -> Flyway.configure()
        .dataSource(SANDBOX.bareUrl(APP + "-url", null), SANDBOX.cluster().user(), null)
        .driver("dev.omnium.jdbc.OmniumDriver")
        .load().info());
    assertTrue(e.getMessage().startsWith("No Flyway database plugin found to handle jdbc:omnium:"), e.getMessage());
  }

  @Test
  void everyMigrationRanOnThePrimaryWhileFlywaysAdvisoryLockWasHeldThere() throws Exception {
    assertTrue(result.success);
    assertEquals(3, result.migrationsExecuted);
    List<String> rows = new ArrayList<>();
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT version, in_recovery, port, app, lock_holders FROM flyway_audit ORDER BY version")) {
      while (rs.next()) {
        rows.add(rs.getString(1) + " recovery=" + rs.getBoolean(2) + " port=" + rs.getInt(3) + " app=" + rs.getString(4)
            + " lock held by=" + rs.getString(5));
      }
    }
    int port = SANDBOX.primary().port();
    // the lock is visible in the primary's pg_locks, held by a session on this application's read-write route
    assertEquals(List.of(
        "1 recovery=false port=" + port + " app=" + APP + " lock held by=" + APP,
        "2 recovery=false port=" + port + " app=" + APP + " lock held by=" + APP,
        "3 recovery=false port=" + port + " app=" + APP + " lock held by=" + APP), rows);
  }

  @Test
  void flywayNeverDeclaredReadOnlySoNothingWasRoutedAway() throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName("dev.omnium:type=Router,name=" + APP);
    assertEquals(0L, server.getAttribute(name, "ReplicaRoutes"));
    assertEquals(0L, server.getAttribute(name, "FallbackRoutes"));
    assertTrue((Long) server.getAttribute(name, "PrimaryStatements") > 0);
  }

  @Test
  void theMigratedSchemaReachesTheReplica() throws Exception {
    SANDBOX.awaitCaughtUp();
    assertEquals("4", SANDBOX.queryOne(SANDBOX.replica(),
        "SELECT count(*) FROM flyway_schema_history WHERE success"), "baseline + 3 migrations");
    assertEquals("20", SANDBOX.queryOne(SANDBOX.replica(), "SELECT customers FROM customer_domain"));
    // and an application reading through omnium sees it on the replica
    try (Connection c = DriverManager.getConnection(SANDBOX.url(APP + "-reader", "heartbeatInterval=200ms"))) {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(15), "a read routed to the replica", () -> Where.of(c).inRecovery());
      try (Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery(), max(version::int) FROM flyway_schema_history")) {
        rs.next();
        assertTrue(rs.getBoolean(1));
        assertEquals(3, rs.getInt(2));
      }
    }
  }
}
