package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Rows;
import dev.omnium.sandbox.testkit.Sessions;
import dev.omnium.sandbox.testkit.Where;
import java.io.StringReader;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.jdbc.PgConnection;

/** The routing rules on a healthy primary + replica, asserted from what each server saw. */
class RoutingIT {
  private static final AtomicInteger APPS = new AtomicInteger();
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).sql(
      "CREATE TABLE items (id int PRIMARY KEY, name text)",
      "INSERT INTO items SELECT g, 'item' || g FROM generate_series(1, 10) g",
      "CREATE SCHEMA other",
      "CREATE TABLE other.marker (v text)",
      "INSERT INTO other.marker VALUES ('other schema')").build();

  /** A distinct applicationName per test: its own router, and its own sessions in pg_stat_activity. */
  static String app() {
    return "routing" + APPS.incrementAndGet();
  }

  static String url(String app, String extra) {
    return SANDBOX.url(app, "heartbeatInterval=200ms" + (extra == null ? "" : "&" + extra));
  }

  static Connection open(String app) throws SQLException {
    return DriverManager.getConnection(url(app, null));
  }

  /** Waits until the router has measured the replica as fresh, so a read is expected there. */
  static void awaitFresh(Connection c) throws Exception {
    Poll.until(Duration.ofSeconds(10), "the replica to be measured fresh", () -> {
      boolean ro = c.isReadOnly();
      c.setReadOnly(true);
      boolean onReplica = Where.of(c).inRecovery();
      c.setReadOnly(ro);
      return onReplica;
    });
  }

  /** Waits until the replica is measured fresh, then makes {@code c} read-only. */
  static void readOnlyOnceFresh(Connection c) throws Exception {
    awaitFresh(c);
    c.setReadOnly(true);
  }

  @Test
  void writesRunOnThePrimary() throws Exception {
    try (Connection c = open(app())) {
      Where w = Where.of(c);
      assertFalse(w.inRecovery());
      assertEquals(SANDBOX.primary().port(), w.port());
      try (Statement st = c.createStatement()) {
        assertEquals(1, st.executeUpdate("INSERT INTO items VALUES (100, 'written')"));
      }
      try (Connection direct = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = direct.createStatement();
           ResultSet rs = st.executeQuery("SELECT name FROM items WHERE id = 100")) {
        assertTrue(rs.next(), "the primary has the row");
        assertEquals("written", rs.getString(1));
      }
    }
  }

  @Test
  void readOnlyAutocommitRunsOnTheReplica() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      readOnlyOnceFresh(c);
      Where w = Where.of(c);
      assertTrue(w.inRecovery(), "ran on a replica");
      assertEquals(SANDBOX.replica(0).port(), w.port());
      assertEquals(app + ":replica", w.applicationName());
    }
  }

  @Test
  void readOnlyTransactionRunsOnOneReplicaSessionUntilCommit() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      readOnlyOnceFresh(c);
      c.setAutoCommit(false);
      Where first = Where.of(c);
      Where second = Where.of(c);
      assertTrue(first.inRecovery());
      assertEquals(first.pid(), second.pid(), "one transaction, one physical session");
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM items")) {
        rs.next();
        assertTrue(rs.getInt(1) >= 10);
      }
      c.commit();
      // after commit, read-write work goes to the primary on the same logical connection
      c.setReadOnly(false);
      Where w = Where.of(c);
      assertFalse(w.inRecovery());
      c.commit();
    }
  }

  @Test
  void writesInsideAReadOnlyTransactionFailWith25006OnTheReplica() throws Exception {
    try (Connection c = open(app())) {
      readOnlyOnceFresh(c);
      c.setAutoCommit(false);
      assertTrue(Where.of(c).inRecovery());
      SQLException e = assertThrows(SQLException.class, () -> {
        try (Statement st = c.createStatement()) {
          st.executeUpdate("INSERT INTO items VALUES (200, 'nope')");
        }
      });
      assertEquals("25006", e.getSQLState());
      c.rollback();
    }
  }

  /**
   * A read session is read-only by its startup packet, so pgjdbc begins its transactions with a
   * plain {@code BEGIN}: the server takes {@code transaction_read_only} from the session's default
   * (source {@code override}) instead of setting it for each transaction ({@code BEGIN READ ONLY},
   * source {@code session}, as pgjdbc straight does), which costs it a setting per transaction.
   * Writes still fail 25006 on both read routes.
   */
  @Test
  void readOnlyTransactionsTakeReadOnlyFromTheSessionDefault() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      readOnlyOnceFresh(c);
      assertTransactionReadOnlyFrom("override", c, true);
    }
    try (Connection c = DriverManager.getConnection(SANDBOX.primaryUrl(app + "fb", null))) {
      c.setReadOnly(true);
      assertTransactionReadOnlyFrom("override", c, false);
    }
    String plain = SANDBOX.pgjdbcUrlAs(SANDBOX.primary(), SANDBOX.cluster().user(), null, app, null);
    try (Connection c = DriverManager.getConnection(plain)) {
      c.setReadOnly(true); // pgjdbc: BEGIN READ ONLY, the contrast that shows the test can fail
      assertTransactionReadOnlyFrom("session", c, false);
    }
  }

  private static void assertTransactionReadOnlyFrom(String source, Connection c, boolean replica)
      throws SQLException {
    c.setAutoCommit(false);
    String[] seen = Rows.first(c, "SELECT setting, source, pg_is_in_recovery()::text FROM pg_settings"
        + " WHERE name = 'transaction_read_only'");
    assertEquals("on", seen[0]);
    assertEquals(source, seen[1]);
    assertEquals(String.valueOf(replica), seen[2]);
    SQLException e = assertThrows(SQLException.class, () -> {
      try (Statement st = c.createStatement()) {
        st.executeUpdate("INSERT INTO items VALUES (400, 'nope')");
      }
    });
    assertEquals("25006", e.getSQLState());
    c.rollback();
    c.setAutoCommit(true);
  }

  @Test
  void sessionSettingsArriveInTheStartupPacketPerRoute() throws Exception {
    String app = app();
    String url = url(app, "statementTimeout=7s&replicaStatementTimeout=3s&idleInTransactionTimeout=42s&lockTimeout=2s");
    try (Connection c = DriverManager.getConnection(url)) {
      String[] primary = settings(c);
      assertEquals(app, primary[0]);
      assertEquals("7s", primary[1]);
      assertEquals("42s", primary[2]);
      assertEquals("2s", primary[3]);
      assertEquals("off", primary[4]);
      readOnlyOnceFresh(c);
      String[] replica = settings(c);
      assertEquals(app + ":replica", replica[0]);
      assertEquals("3s", replica[1]);
      assertEquals("42s", replica[2]);
      assertEquals("on", replica[4]);
    }
    // no replica configured: the fallback route carries the primary's timeouts, read-only
    String fallbackUrl = SANDBOX.primaryUrl(app + "fb", "statementTimeout=7s");
    try (Connection c = DriverManager.getConnection(fallbackUrl)) {
      c.setReadOnly(true);
      String[] fallback = settings(c);
      assertEquals(app + "fb:fallback", fallback[0]);
      assertEquals("7s", fallback[1]);
      assertEquals("on", fallback[4]);
    }
  }

  private static String[] settings(Connection c) throws SQLException {
    return Rows.first(c, "SELECT current_setting('application_name'), current_setting('statement_timeout'),"
        + " current_setting('idle_in_transaction_session_timeout'), current_setting('lock_timeout'),"
        + " current_setting('default_transaction_read_only')");
  }

  @Test
  void aPreparedStatementKeepsItsParametersAcrossBindings() throws Exception {
    try (Connection c = open(app())) {
      awaitFresh(c);
      PreparedStatement ps = c.prepareStatement("SELECT ?::int + 1, pg_is_in_recovery(), inet_server_port()");
      ps.setInt(1, 41);
      ps.setFetchSize(10);
      c.setReadOnly(true);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertEquals(42, rs.getInt(1));
        assertTrue(rs.getBoolean(2), "first run on the replica");
      }
      c.setReadOnly(false);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertEquals(42, rs.getInt(1), "same parameter after the binding changed");
        assertFalse(rs.getBoolean(2), "second run on the primary");
        assertEquals(SANDBOX.primary().port(), rs.getInt(3));
      }
      assertEquals(10, ps.getFetchSize());
      ps.close();
    }
  }

  @Test
  void jdbcStateFollowsTheLogicalConnectionToEveryRoute() throws Exception {
    try (Connection c = open(app())) {
      awaitFresh(c);
      c.setSchema("other");
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      c.setReadOnly(true);
      c.setAutoCommit(false);
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
          "SELECT current_schema(), current_setting('transaction_isolation'), pg_is_in_recovery(),"
              + " (SELECT v FROM marker)")) {
        rs.next();
        assertEquals("other", rs.getString(1));
        assertEquals("repeatable read", rs.getString(2));
        assertTrue(rs.getBoolean(3));
        assertEquals("other schema", rs.getString(4));
      }
      c.commit();
      c.setReadOnly(false);
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
          "SELECT current_schema(), current_setting('transaction_isolation'), pg_is_in_recovery()")) {
        rs.next();
        assertEquals("other", rs.getString(1));
        assertEquals("repeatable read", rs.getString(2));
        assertFalse(rs.getBoolean(3));
      }
      c.commit();
      assertEquals("other", c.getSchema());
      assertEquals(Connection.TRANSACTION_REPEATABLE_READ, c.getTransactionIsolation());
    }
  }

  @Test
  void rawSqlSessionSettingsFollowTheConnection() throws Exception {
    // Routing contract, rule 6: a SET through SQL is logical state, as on a pgjdbc connection.
    try (Connection c = open(app())) {
      awaitFresh(c);
      try (Statement st = c.createStatement()) {
        st.execute("SET search_path TO other, public");
      }
      c.setReadOnly(true);
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_schema(), pg_is_in_recovery()")) {
        rs.next();
        assertEquals("other", rs.getString(1), "the replica session got the SET");
        assertTrue(rs.getBoolean(2));
      }
      c.setReadOnly(false);
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_schema()")) {
        rs.next();
        assertEquals("other", rs.getString(1), "the primary session kept it");
      }
    }
  }

  @Test
  void isValidOnAnUnboundConnectionOpensNothing() throws Exception {
    String app = app();
    // The first connect's login proves the credentials: it is that connection's primary session.
    try (Connection proving = open(app); Connection c = open(app)) {
      assertEquals(1, Sessions.count(SANDBOX.cluster(), SANDBOX.primary(), app), "the proving login");
      assertTrue(c.isValid(2));
      assertEquals(1, Sessions.count(SANDBOX.cluster(), SANDBOX.primary(), app), "no primary session opened");
      Where.of(c);
      assertEquals(2, Sessions.count(SANDBOX.cluster(), SANDBOX.primary(), app), "the first statement binds one");
      assertTrue(c.isValid(2));
    }
    Poll.until(Duration.ofSeconds(5), "the primary sessions to end on close",
        () -> Sessions.count(SANDBOX.cluster(), SANDBOX.primary(), app) == 0);
  }

  @Test
  void unwrapBindsThePrimaryForCopy() throws Exception {
    try (Connection c = open(app())) {
      c.setReadOnly(true);
      assertTrue(c.isWrapperFor(PGConnection.class));
      // the logical connection is pgjdbc's API itself; its COPY runs on the primary session
      PGConnection pg = c.unwrap(PGConnection.class);
      assertSame(c, pg);
      assertTrue(c.unwrap(PgConnection.class) instanceof PgConnection, "pgjdbc's own on request");
      c.setReadOnly(false);
      try (Statement st = c.createStatement()) {
        st.execute("CREATE TABLE IF NOT EXISTS copied (v int)");
      }
      CopyManager copy = pg.getCopyAPI();
      long rows = copy.copyIn("COPY copied FROM STDIN", new StringReader("1\n2\n3\n"));
      assertEquals(3, rows);
      try (Connection direct = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = direct.createStatement();
           ResultSet rs = st.executeQuery("SELECT count(*) FROM copied")) {
        rs.next();
        assertEquals(3, rs.getInt(1), "the primary received the COPY");
      }
      assertSame(c, c.unwrap(OmniumConnection.class));
    }
  }

  @Test
  void statementsResultSetsAndMetadataReturnTheLogicalObjects() throws Exception {
    try (Connection c = open(app())) {
      Statement st = c.createStatement();
      assertSame(c, st.getConnection());
      ResultSet rs = st.executeQuery("SELECT 1");
      assertSame(st, rs.getStatement());
      assertSame(rs, st.getResultSet());
      rs.close();
      PreparedStatement ps = c.prepareStatement("SELECT ?");
      ps.setString(1, "x");
      ResultSet prs = ps.executeQuery();
      assertSame(ps, prs.getStatement());
      assertSame(c, ps.getConnection());
      DatabaseMetaData md = c.getMetaData();
      assertSame(c, md.getConnection());
      try (ResultSet tables = md.getTables(null, "public", "items", null)) {
        assertTrue(tables.next());
        assertEquals("items", tables.getString("TABLE_NAME"));
      }
      c.close();
      assertTrue(st.isClosed(), "closing the connection closes its statements");
      assertTrue(ps.isClosed());
      c.close(); // idempotent
    }
  }

  @Test
  void theJmxBeanCountsRoutes() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      awaitFresh(c);
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      ObjectName name = new ObjectName("dev.omnium:type=Router,name=" + app);
      assertTrue(server.isRegistered(name), "bean registered as " + name);
      long before = (Long) server.getAttribute(name, "ReplicaRoutes");
      c.setReadOnly(true);
      Where.of(c);
      Where.of(c);
      long after = (Long) server.getAttribute(name, "ReplicaRoutes");
      assertEquals(before + 2, after, "two autocommit reads, two routes");
      assertEquals(1, ((String[]) server.getAttribute(name, "Replicas")).length);
      assertEquals(4, server.getAttribute(name, "FallbackPoolSize"));
    }
  }

  @Test
  void withoutAReplicaReadsRunOnTheFallbackPool() throws Exception {
    String app = app();
    String url = SANDBOX.primaryUrl(app, null);
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      Where w = Where.of(c);
      assertFalse(w.inRecovery());
      assertEquals(SANDBOX.primary().port(), w.port());
      assertEquals(app + ":fallback", w.applicationName());
      assertTrue(w.readOnlyDefault());
      SQLException e = assertThrows(SQLException.class, () -> {
        try (Statement st = c.createStatement()) {
          st.executeUpdate("INSERT INTO items VALUES (300, 'nope')");
        }
      });
      assertEquals("25006", e.getSQLState(), "the fallback route is read-only too");
    }
  }

  @Test
  void anUnreachableReplicaCostsNoWait() throws Exception {
    String app = app();
    int deadPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      deadPort = s.getLocalPort();
    }
    String url = SANDBOX.primaryUrl(app, "replica=127.0.0.1:" + deadPort
        + "&replicaAcquireTimeout=500ms");
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      for (int i = 0; i < 5; i++) {
        long start = System.nanoTime();
        Where w = Where.of(c);
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertFalse(w.inRecovery());
        assertEquals(app + ":fallback", w.applicationName());
        assertTrue(millis < 500 + 1500, "a read waited " + millis + " ms for a dead replica");
      }
    }
  }

  @Test
  void dataSourceModeOffersTheExplicitIntents() throws Exception {
    String app = app();
    try (OmniumDataSource db = new OmniumDataSource(url(app, "primaryPoolSize=2&replicaPoolSize=2"))) {
      try (Connection c = db.write()) {
        assertFalse(Where.of(c).inRecovery());
      }
      Poll.until(Duration.ofSeconds(10), "a fresh replica read", () -> {
        try (Connection c = db.read()) {
          return Where.of(c).inRecovery();
        }
      });
      try (Connection c = db.read(Duration.ofSeconds(30))) {
        assertTrue(c.isReadOnly());
        Where w = Where.of(c);
        assertTrue(w.inRecovery());
        assertEquals(app + ":replica", w.applicationName());
      }
      int total = db.readWithRetry(c -> {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM items")) {
          rs.next();
          return rs.getInt(1);
        }
      });
      assertTrue(total >= 10);
      assertTrue(db.metrics().getReplicaRoutes() >= 2);
      assertFalse(db.toString().contains("password"));
    }
    try {
      Poll.until(Duration.ofSeconds(30), "every session of a closed data source to end", () ->
          Sessions.countLike(SANDBOX.cluster(), SANDBOX.primary(), app) == 0
              && Sessions.countLike(SANDBOX.cluster(), SANDBOX.replica(0), app) == 0);
    } catch (AssertionError e) { // say which sessions stayed: the failure is rare
      throw new AssertionError(e.getMessage() + "; still open on the primary: "
          + Sessions.describeLike(SANDBOX.cluster(), SANDBOX.primary(), app) + "; on the replica: "
          + Sessions.describeLike(SANDBOX.cluster(), SANDBOX.replica(0), app), e);
    }
  }
}
