package dev.omnium.fw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Session state that frameworks set through JDBC (HikariCP's {@code schema}, Spring's isolation, network
 * timeouts) follows every routing change, and so do session settings set with SQL ({@code SET search_path}),
 * as on a pgjdbc connection (routing contract, rule 6).
 */
class SessionStateIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static HikariDataSource pool;
  static JdbcTemplate jdbc;
  static TransactionTemplate readOnly;
  static TransactionTemplate readWrite;

  /** What the server says about the session a statement ran in. */
  record State(Where where, String schema, String marker, String isolation) { }

  static final String STATE_SQL = "SELECT " + Where.COLUMNS + ", current_schema() AS schema,"
      + " (SELECT v FROM marker) AS marker, current_setting('transaction_isolation') AS isolation";

  static State state(JdbcTemplate t) {
    return t.queryForObject(STATE_SQL, (rs, n) -> state(rs));
  }

  static State state(ResultSet rs) throws SQLException {
    return new State(Where.from(rs), rs.getString("schema"), rs.getString("marker"), rs.getString("isolation"));
  }

  static State state(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(STATE_SQL)) {
      rs.next();
      return state(rs);
    }
  }

  /** Makes {@code c} read-only and returns the state its reads see once they run on the replica. */
  State replicaState(Connection c, String app) throws Exception {
    c.setReadOnly(true);
    Poll.until(Duration.ofSeconds(15), "a read on the replica",
        () -> state(c).where().inRecovery());
    State replica = state(c);
    assertOnReplica(replica.where(), app);
    return replica;
  }

  @BeforeAll
  static void up() throws Exception {
    SANDBOX.execOnPrimary("CREATE TABLE public.marker (v text)", "INSERT INTO public.marker VALUES ('public')",
        "CREATE SCHEMA other", "CREATE TABLE other.marker (v text)", "INSERT INTO other.marker VALUES ('other')");
    SANDBOX.awaitCaughtUp();
    // HikariCP as Spring Boot configures it, with spring.datasource.hikari.schema=other
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(SANDBOX.bareUrl("state", "heartbeatInterval=200ms"));
    hc.setUsername(SANDBOX.cluster().user());
    hc.setSchema("other");
    hc.setMaximumPoolSize(2);
    pool = new HikariDataSource(hc);
    jdbc = new JdbcTemplate(pool);
    DataSourceTransactionManager tm = new DataSourceTransactionManager(pool);
    readOnly = new TransactionTemplate(tm);
    readOnly.setReadOnly(true);
    readWrite = new TransactionTemplate(tm);
    Poll.until(Duration.ofSeconds(15), "read-only transactions to reach the replica",
        () -> readOnly.execute(s -> state(jdbc)).where().inRecovery());
  }

  @AfterAll
  static void down() throws Exception {
    if (pool != null) pool.close();
  }

  void assertOnReplica(Where w, String app) {
    Routes.assertOnReplica(w, SANDBOX, app);
  }

  void assertOnPrimary(Where w, String app) {
    Routes.assertOnPrimary(w, SANDBOX, app);
  }

  /** HikariCP calls setSchema("other") once per pooled connection; every route then resolves names in it. */
  @Test
  void poolSchemaAppliesOnEveryRoute() {
    State replica = readOnly.execute(s -> state(jdbc));
    assertOnReplica(replica.where(), "state");
    assertEquals("other", replica.schema());
    assertEquals("other", replica.marker(), "unqualified names resolve in the JDBC schema on the replica");
    State primary = readWrite.execute(s -> state(jdbc));
    assertOnPrimary(primary.where(), "state");
    assertEquals("other", primary.schema());
    assertEquals("other", primary.marker());
  }

  /** Spring calls setTransactionIsolation for the transaction and resets it afterwards: both reach the replica. */
  @Test
  void springIsolationReachesTheReplicaAndDoesNotLeak() {
    TransactionTemplate repeatable = new TransactionTemplate(readOnly.getTransactionManager());
    repeatable.setReadOnly(true);
    repeatable.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
    State inside = repeatable.execute(s -> state(jdbc));
    assertOnReplica(inside.where(), "state");
    assertEquals("repeatable read", inside.isolation());
    State after = readOnly.execute(s -> state(jdbc));
    assertOnReplica(after.where(), "state");
    assertEquals("read committed", after.isolation(), "the next transaction is back to the default");
    State primary = readWrite.execute(s -> state(jdbc));
    assertEquals("read committed", primary.isolation());
  }

  /**
   * PostgreSQL cannot run SERIALIZABLE transactions on a hot standby (0A000), so a read-only
   * SERIALIZABLE transaction takes the fallback route; REPEATABLE READ runs on the replica.
   */
  @Test
  void serializableReadOnlyTransactionsTakeTheFallbackRoute() throws Exception {
    String app = "serializable";
    try (Connection c = DriverManager.getConnection(SANDBOX.url(app, "heartbeatInterval=200ms"))) {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(15), "a read on the replica", () -> Where.of(c).inRecovery());
      c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      c.setAutoCommit(false);
      State s = state(c);
      assertTrue(!s.where().inRecovery(), "served by the primary");
      assertEquals(app + ":fallback", s.where().applicationName());
      assertEquals("serializable", s.isolation());
      c.commit();
    }
    try (Connection c = DriverManager.getConnection(SANDBOX.url(app, "heartbeatInterval=200ms"))) {
      // REPEATABLE READ is what a read-only transaction can use on a replica
      c.setReadOnly(true);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      c.setAutoCommit(false);
      State ok = state(c);
      assertOnReplica(ok.where(), app);
      assertEquals("repeatable read", ok.isolation());
      c.commit();
    }
  }

  /** A network timeout set on the logical connection bounds statements on whichever route they take. */
  @Test
  void networkTimeoutAppliesToTheReplicaAndThePrimary() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      for (boolean ro : new boolean[] {true, false}) {
        try (Connection c = pool.getConnection()) {
          c.setNetworkTimeout(executor, 500); // before anything is bound: applied when a route is taken
          c.setReadOnly(ro);
          c.setAutoCommit(false);
          Where w = Where.of(c);
          if (ro) assertOnReplica(w, "state"); else assertOnPrimary(w, "state");
          assertEquals(500, c.getNetworkTimeout());
          long start = System.nanoTime();
          SQLException e = assertThrows(SQLException.class, () -> {
            try (Statement st = c.createStatement()) {
              st.execute("SELECT pg_sleep(5)");
            }
          });
          long ms = (System.nanoTime() - start) / 1_000_000;
          assertTrue(ms >= 400 && ms < 4000, (ro ? "replica" : "primary") + ": the socket timed out after " + ms + " ms: " + e);
          assertTrue(e.getSQLState() != null && e.getSQLState().startsWith("08"), "a connection error: " + e.getSQLState());
        }
      }
      // the pool replaced the broken connections: work goes on
      assertOnReplica(readOnly.execute(s -> state(jdbc)).where(), "state");
      assertOnPrimary(readWrite.execute(s -> state(jdbc)).where(), "state");
    } finally {
      executor.shutdownNow();
    }
  }

  /**
   * Routing contract, rule 6: {@code SET search_path} through SQL is logical state, as on a pgjdbc
   * connection: read-only work on the replica resolves names in it too, and the primary session keeps it.
   */
  @Test
  void sqlSetFollowsTheConnectionToEveryRoute() throws Exception {
    String app = "rawset-primary";
    try (Connection c = DriverManager.getConnection(SANDBOX.url(app, "heartbeatInterval=200ms"))) {
      try (Statement st = c.createStatement()) {
        st.execute("SET search_path TO other");
      }
      State primary = state(c);
      assertOnPrimary(primary.where(), app);
      assertEquals("other", primary.schema());
      State replica = replicaState(c, app);
      assertEquals("other", replica.schema(), "the SQL SET reached the replica session");
      assertEquals("other", replica.marker());
      c.setReadOnly(false);
      State again = state(c);
      assertEquals(primary.where().pid(), again.where().pid(), "the same primary session, bound until close");
      assertEquals("other", again.schema(), "and it still carries the SET");
      // the JDBC setter owns the setting from then on
      c.setSchema("public");
      c.setReadOnly(true);
      assertEquals("public", state(c).schema());
      assertOnReplica(state(c).where(), app);
    }
  }

  /**
   * A server setting for every physical session goes in pgjdbc's {@code options}, which reaches every route.
   * With a search_path that leaves out {@code public}, name the heartbeat table with its schema (see
   * DriverBugsIT.searchPathInTheUrlHidesTheHeartbeatTable).
   */
  @Test
  void pgjdbcOptionsInTheUrlReachEveryRoute() throws Exception {
    String app = "options";
    String url = SANDBOX.url(app, "heartbeatInterval=200ms&heartbeatTable=public.replica_heartbeat"
        + "&options=-c%20search_path%3Dother");
    try (Connection c = DriverManager.getConnection(url)) {
      State primary = state(c);
      assertOnPrimary(primary.where(), app);
      assertEquals("other", primary.schema());
      State replica = replicaState(c, app);
      assertEquals("other", replica.schema());
    }
  }

  /**
   * A SQL {@code SET} in read-only work lands on a pooled replica session and belongs to its logical
   * connection. The driver saw the SET, so the session is reset before it is lent again, whether or not the
   * server reports the setting (search_path only from PostgreSQL 18); see docs/architecture.md. {@code SET
   * LOCAL} ends with its transaction.
   */
  @Test
  void sqlSetInReadOnlyWorkNeverReachesAnotherConnection() throws Exception {
    String app = "rawset-replica";
    String url = SANDBOX.url(app, "heartbeatInterval=200ms");
    int polluted;
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(15), "a read on the replica", () -> state(c).where().inRecovery());
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("SET LOCAL search_path TO other");
      }
      assertEquals("other", state(c).schema(), "SET LOCAL holds inside its transaction");
      c.commit();
      assertEquals("public", state(c).schema(), "and ends with it");
      c.commit();
      c.setAutoCommit(true);
      State before;
      try (Statement st = c.createStatement()) {
        st.execute("SET search_path TO other");
        before = state(c);
      }
      assertOnReplica(before.where(), app);
      assertEquals("other", before.schema(), "the SET changed the replica session it ran on");
      polluted = before.where().pid();
    }
    // Three logical connections hold read-only transactions at once, so they hold three different replica
    // sessions: none carries it, the one the SET ran in included.
    List<Connection> open = new ArrayList<>();
    try {
      List<State> seen = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        Connection c = DriverManager.getConnection(url);
        open.add(c);
        c.setReadOnly(true);
        c.setAutoCommit(false);
        seen.add(state(c));
      }
      assertEquals(3, seen.stream().map(s -> s.where().pid()).distinct().count(), "three sessions: " + seen);
      for (State s : seen) {
        assertOnReplica(s.where(), app);
        assertEquals("public", s.schema(), "reset on return: " + s
            + (s.where().pid() == polluted ? " (the session the SET ran in)" : ""));
      }
    } finally {
      for (Connection c : open) c.close();
    }
  }

  static String sqlState(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException s && s.getSQLState() != null) return s.getSQLState();
    }
    return null;
  }
}
