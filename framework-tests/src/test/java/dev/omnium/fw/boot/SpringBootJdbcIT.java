package dev.omnium.fw.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.fw.Routes;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.lang.management.ManagementFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.dao.DataAccessException;

/**
 * Spring Boot 3 with {@code spring.datasource.url=jdbc:omnium:postgresql://…?replica=…} and Boot's own
 * HikariCP pool: where each {@code @Transactional} method ran, as the servers report it.
 */
class SpringBootJdbcIT {
  static final String APP = "bootjdbc";
  static final AtomicInteger IDS = new AtomicInteger(1000);
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).healAfterEach().build();
  static ConfigurableApplicationContext context;
  static BootJdbcApp.Reads reads;
  static BootJdbcApp.Writes writes;

  @BeforeAll
  static void up() throws Exception {
    // Exactly what docs/frameworks.md tells a Boot user to write (application.properties).
    context = BootContext.start(BootJdbcApp.class, SANDBOX, APP,
        "maxAge=2s&heartbeatInterval=200ms",
        "spring.datasource.hikari.maximum-pool-size=4",
        "spring.flyway.locations=classpath:db/boot",
        // the database already holds omnium's replica_heartbeat table: let Flyway start its
        // history below V1
        "spring.flyway.baseline-on-migrate=true",
        "spring.flyway.baseline-version=0");
    reads = context.getBean(BootJdbcApp.Reads.class);
    writes = context.getBean(BootJdbcApp.Writes.class);
    SANDBOX.awaitCaughtUp();
    awaitReplicaRoute();
  }


  @AfterAll
  static void down() throws Exception {
    if (context != null) context.close();
  }

  static void awaitReplicaRoute() throws Exception {
    Poll.until(Duration.ofSeconds(15), "read-only methods to reach the replica", () -> reads.where().inRecovery());
  }

  int primaryPort() {
    return SANDBOX.primary().port();
  }

  void assertOnReplica(Where w) {
    Routes.assertOnReplica(w, SANDBOX, APP);
  }

  void assertOnPrimary(Where w) {
    Routes.assertOnPrimary(w, SANDBOX, APP);
  }

  /** Where each recorded unit of work ran, in order: "replica" or "primary". */
  void assertRan(List<Where> seen, String... routes) {
    assertEquals(routes.length, seen.size());
    for (int i = 0; i < routes.length; i++) {
      if (routes[i].equals("replica")) {
        assertOnReplica(seen.get(i));
      } else {
        assertOnPrimary(seen.get(i));
      }
    }
  }

  boolean onPrimary(int id) throws SQLException {
    return "1".equals(SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM items WHERE id = ?", id));
  }

  @Test
  void bootBuiltItsOwnHikariPoolOverTheOmniumDriver() throws Exception {
    DataSource ds = context.getBean(DataSource.class);
    assertEquals("com.zaxxer.hikari.HikariDataSource", ds.getClass().getName());
    try (var c = ds.getConnection()) {
      assertTrue(c.isWrapperFor(dev.omnium.jdbc.OmniumConnection.class), "Hikari pools omnium's logical connections");
    }
  }

  @Test
  void readOnlyTransactionRunsOnTheReplicaInOneSession() throws Exception {
    List<Where> seen = reads.twoStatements();
    assertOnReplica(seen.get(0));
    assertOnReplica(seen.get(1));
    assertEquals(seen.get(0).pid(), seen.get(1).pid(), "one transaction, one replica session");
  }

  @Test
  void transactionalRunsOnThePrimary() throws Exception {
    int id = IDS.incrementAndGet();
    Where w = writes.insert(id, new ArrayList<>());
    assertOnPrimary(w);
    assertTrue(onPrimary(id), "the row is on the primary");
  }

  /**
   * REQUIRED joins the caller's transaction, and Spring does not change the read-only flag of a
   * transaction that is joined: the write runs inside the read-only transaction, on its replica
   * session, and PostgreSQL refuses it with 25006 (exactly as it would with plain pgjdbc, whose
   * read-only transactions are {@code BEGIN READ ONLY}).
   */
  @Test
  void readOnlyMethodCallingRequiredWriteJoinsTheReadOnlyTransaction() throws Exception {
    int id = IDS.incrementAndGet();
    List<Where> seen = new ArrayList<>();
    DataAccessException e = assertThrows(DataAccessException.class, () -> reads.thenRequiredWrite(id, seen));
    assertEquals("25006", sqlState(e), "cannot execute INSERT in a read-only transaction: " + e);
    assertRan(seen, "replica", "replica");
    assertEquals(seen.get(0).pid(), seen.get(1).pid(), "the inner method joined the outer replica transaction");
    assertFalse(onPrimary(id), "nothing was written");
  }

  /** REQUIRES_NEW suspends the read-only transaction and runs a read-write one: on the primary. */
  @Test
  void readOnlyMethodCallingRequiresNewWriteRunsItOnThePrimary() throws Exception {
    int id = IDS.incrementAndGet();
    List<Where> seen = new ArrayList<>();
    reads.thenRequiresNewWrite(id, seen);
    assertRan(seen, "replica", "primary", "replica");
    assertEquals(seen.get(0).pid(), seen.get(2).pid(), "the outer read-only transaction kept its replica session");
    assertTrue(onPrimary(id), "the inner transaction committed on the primary");
  }

  /** A read-only method joined from a read-write transaction runs in it: on the primary, seeing its writes. */
  @Test
  void readWriteMethodCallingReadOnlyRequiredKeepsItOnThePrimary() throws Exception {
    int id = IDS.incrementAndGet();
    List<Where> seen = new ArrayList<>();
    assertEquals(1, writes.insertThenReadOnlyJoin(id, seen), "the joined read sees the uncommitted row");
    assertRan(seen, "primary", "primary");
    assertEquals(seen.get(0).pid(), seen.get(1).pid(), "one transaction, one primary session");
  }

  @Test
  void pausedReplayMovesReadOnlyMethodsToTheFallbackAndBack() throws Exception {
    assertOnReplica(reads.where());
    SANDBOX.cluster().pauseReplay(SANDBOX.replica());
    Poll.until(Duration.ofSeconds(15), "read-only methods to leave the paused replica", () -> !reads.where().inRecovery());
    Where w = reads.where();
    assertEquals(APP + ":fallback", w.applicationName(), "the capped fallback pool on the primary: " + w);
    assertEquals(primaryPort(), w.port());
    assertFalse(w.inRecovery());
    // the fallback route is read-only too: writes there fail like on a replica
    int id = IDS.incrementAndGet();
    DataAccessException e = assertThrows(DataAccessException.class, () -> reads.thenRequiredWrite(id, new ArrayList<>()));
    assertEquals("25006", sqlState(e));
    // and read-write methods are unaffected by the lag
    assertOnPrimary(writes.insert(IDS.incrementAndGet(), new ArrayList<>()));

    SANDBOX.cluster().resumeReplay(SANDBOX.replica());
    awaitReplicaRoute();
    assertOnReplica(reads.where());
  }

  @Test
  void theDriversJmxBeanAppearsAndCountsTheRoutes() throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName("dev.omnium:type=Router,name=" + APP);
    assertTrue(server.isRegistered(name), "registered as " + name);
    assertEquals(List.of(SANDBOX.replica().hostPort()), List.of((String[]) server.getAttribute(name, "Replicas")));
    assertEquals(2000L, server.getAttribute(name, "MaxAgeMillis"));
    long replicaBefore = (Long) server.getAttribute(name, "ReplicaRoutes");
    long primaryBefore = (Long) server.getAttribute(name, "PrimaryStatements");
    assertOnReplica(reads.where());
    assertOnPrimary(writes.insert(IDS.incrementAndGet(), new ArrayList<>()));
    assertTrue((Long) server.getAttribute(name, "ReplicaRoutes") > replicaBefore, "a replica route was counted");
    assertTrue((Long) server.getAttribute(name, "PrimaryStatements") >= primaryBefore + 2, "primary statements counted");
  }

  /** Boot ran Flyway at start-up through the same omnium DataSource: on the primary's read-write route. */
  @Test
  void bootsFlywayMigratedThroughTheOmniumDataSourceOnThePrimary() throws Exception {
    String row = SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT in_recovery || ',' || port || ',' || app FROM migration_audit WHERE version = '1'");
    assertEquals("false," + primaryPort() + "," + APP, row);
    assertEquals("1", SANDBOX.queryOne(SANDBOX.replica(),
        "SELECT count(*) FROM flyway_schema_history WHERE version = '1' AND success"), "the schema reached the replica");
  }

  /** jOOQ as Boot auto-configures it takes part in Spring transactions, read-only included. */
  @Test
  void bootsJooqFollowsReadOnlyTransactionsToTheReplica() throws Exception {
    assertOnReplica(reads.jooqWhere());
    assertTrue(reads.jooqCount() >= 10);
  }

  /**
   * Why docs/frameworks.md says to set {@code spring.datasource.driver-class-name}: Boot infers the driver
   * class from the URL prefix, knows no {@code jdbc:omnium:}, and refuses to build the DataSource.
   */
  @Test
  void bootCannotInferTheDriverClassFromAJdbcOmniumUrl() {
    Exception e = assertThrows(Exception.class, () -> new SpringApplicationBuilder(BootJdbcApp.class)
        .web(WebApplicationType.NONE)
        .properties("spring.main.banner-mode=off", "spring.main.log-startup-info=false",
            "spring.datasource.url=" + SANDBOX.bareUrl(APP + "-nodriver", null),
            "spring.datasource.username=" + SANDBOX.cluster().user())
        .run().close());
    Throwable root = e;
    while (root.getCause() != null) root = root.getCause();
    assertTrue(String.valueOf(root.getMessage()).contains("Failed to determine a suitable driver class"), root.toString());
  }

  static String sqlState(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException s && s.getSQLState() != null) return s.getSQLState();
    }
    return null;
  }
}
