package dev.omnium.it.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGStatement;

/**
 * A logical connection keeps what a pgjdbc connection keeps: a lost primary session breaks it,
 * pooled sessions are lent clean, failed batches are emptied, metadata follows the binding,
 * warnings are a list. Assertions are on what the servers saw.
 */
class LogicalConnectionIT {
  private static final AtomicInteger APPS = new AtomicInteger();
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE t (v int)", "CREATE SCHEMA tenant_a", "CREATE TABLE tenant_a.t (v int)")
      .build();
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
  }

  static String app() {
    return "lc" + APPS.incrementAndGet();
  }

  /** A URL whose reads all take the fallback route (no replica): one pooled session per route. */
  static String fallbackOnlyUrl(String app) {
    return "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?applicationName=" + app + "&fallbackPoolSize=1&primaryPoolSize=1"
        + "&user=" + cluster.user();
  }

  static String replicaUrl(String app) {
    return "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?replica=" + cluster.replica(0).hostPort() + "&applicationName=" + app
        + "&maxAge=1h&heartbeatInterval=100ms&replicaPoolSize=1&fallbackPoolSize=1"
        + "&user=" + cluster.user();
  }

  static String one(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      assertTrue(rs.next());
      return rs.getString(1);
    }
  }

  static long count(String table) throws SQLException {
    try (Connection c = cluster.connect(cluster.primary())) {
      return Long.parseLong(one(c, "SELECT count(*) FROM " + table));
    }
  }

  static void terminate(int pid) throws Exception {
    try (Connection admin = cluster.connect(cluster.primary())) {
      assertEquals("t", one(admin, "SELECT pg_terminate_backend(" + pid + ")"));
      // pg_terminate_backend only signals: wait until the session is gone
      Poll.until(Duration.ofSeconds(30), "session " + pid + " to end", () -> "0".equals(
          one(admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid)));
    }
  }

  static void awaitReplicaFresh(String app) throws Exception {
    Poll.until(Duration.ofSeconds(60), "a fresh replica", () -> {
      try (Connection c = DriverManager.getConnection(replicaUrl(app))) {
        c.setReadOnly(true);
        return "t".equals(one(c, "SELECT pg_is_in_recovery()"));
      }
    });
  }

  // ------------------------------------------------------------------ defect 1

  @Test
  void aLostPrimarySessionBreaksTheTransactionAndNothingAfterItCommits() throws Exception {
    String app = app();
    try (Statement st = cluster.connect(cluster.primary()).createStatement()) {
      st.execute("CREATE TABLE lost1 (v text)");
    }
    Connection c = DriverManager.getConnection(fallbackOnlyUrl(app));
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.executeUpdate("INSERT INTO lost1 VALUES ('a')");
      terminate(c.unwrap(PGConnection.class).getBackendPID());
      SQLException b = assertThrows(SQLException.class,
          () -> st.executeUpdate("INSERT INTO lost1 VALUES ('b')"));
      assertTrue(b.getSQLState().startsWith("08"), b.getSQLState());
      SQLException cc = assertThrows(SQLException.class,
          () -> st.executeUpdate("INSERT INTO lost1 VALUES ('c')"));
      assertTrue(cc.getSQLState().startsWith("08"), cc.getSQLState());
    }
    assertThrows(SQLException.class, c::commit);
    assertTrue(c.isClosed());
    assertFalse(c.isValid(1));
    c.close();
    assertEquals(0, count("lost1"));
  }

  @Test
  void aLostPrimarySessionInAutocommitIsNeverRebound() throws Exception {
    String app = app();
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app));
         OmniumConnection c = ds.write()) {
      int pid = c.unwrap(PGConnection.class).getBackendPID();
      try (Statement st = c.createStatement()) {
        st.execute("SELECT pg_advisory_lock(42)");
        terminate(pid);
        assertThrows(SQLException.class, () -> st.execute("SELECT 1"));
        SQLException again = assertThrows(SQLException.class, () -> st.execute("SELECT 1"));
        assertTrue(again.getSQLState().startsWith("08"), again.getSQLState());
      }
      assertTrue(c.isClosed());
      assertFalse(c.isValid(1));
      assertThrows(SQLException.class, c::createStatement);
    }
  }

  /**
   * setAutoCommit(true) commits an open read-only transaction, as commit() does: a read session
   * lost before it fails it with pgjdbc's own SQLState (auto-commit stays off), and the dead
   * session is never lent again; the logical connection's next unit of work runs on a new one.
   */
  @Test
  void aReadSessionLostBeforeSetAutoCommitFailsItAndIsNeverLentAgain() throws Exception {
    String pgjdbc;
    try (Connection plain = cluster.connect(cluster.primary())) {
      plain.setReadOnly(true);
      plain.setAutoCommit(false);
      terminate(Integer.parseInt(one(plain, "SELECT pg_backend_pid()")));
      pgjdbc = assertThrows(SQLException.class, () -> plain.setAutoCommit(true)).getSQLState();
    }
    try (Connection c = DriverManager.getConnection(fallbackOnlyUrl(app()))) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      String pid = one(c, "SELECT pg_backend_pid()");
      terminate(Integer.parseInt(pid));
      SQLException e = assertThrows(SQLException.class, () -> c.setAutoCommit(true));
      assertEquals(pgjdbc, e.getSQLState());
      assertFalse(c.getAutoCommit());
      c.setAutoCommit(true);
      String next = one(c, "SELECT pg_backend_pid()");
      assertFalse(pid.equals(next), "the lost session " + pid + " was lent again");
      assertEquals("t", one(c, "SELECT current_setting('transaction_read_only') = 'on'"));
    }
  }

  /**
   * A read-only transaction whose session was lost at a statement cannot be committed by
   * setAutoCommit(true) either: 08003, as commit() says and as pgjdbc's closed connection does.
   */
  @Test
  void aReadTransactionLostAtAStatementIsNotCommittedBySetAutoCommit() throws Exception {
    try (Connection c = DriverManager.getConnection(fallbackOnlyUrl(app()))) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      one(c, "SELECT 1");
      terminate(Integer.parseInt(one(c, "SELECT pg_backend_pid()")));
      SQLException lost = assertThrows(SQLException.class, () -> one(c, "SELECT 2"));
      assertTrue(lost.getSQLState().startsWith("08"), lost.getSQLState());
      SQLException e = assertThrows(SQLException.class, () -> c.setAutoCommit(true));
      assertEquals("08003", e.getSQLState());
      assertFalse(c.getAutoCommit());
      c.setAutoCommit(true); // the next unit of work may run again
      assertEquals("t", one(c, "SELECT pg_is_in_recovery() = false"));
    }
  }

  // ------------------------------------------------------------------ defect 2

  @Test
  void jdbcStateOnAReadSessionNeverReachesTheNextBorrower() throws Exception {
    String app = app();
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app))) {
      try (OmniumConnection c = ds.read()) {
        c.setSchema("tenant_a");
        c.setClientInfo("ApplicationName", "someone-else");
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        assertEquals("tenant_a", one(c, "SELECT current_schema()"));
        assertEquals("someone-else", one(c, "SELECT current_setting('application_name')"));
      }
      try (OmniumConnection c = ds.read()) {
        assertEquals("public", c.getSchema());
        assertEquals("public", one(c, "SELECT current_schema()"));
        assertEquals(app + ":fallback", one(c, "SELECT current_setting('application_name')"));
        assertEquals("read committed", one(c, "SELECT current_setting('transaction_isolation')"));
      }
    }
  }

  @Test
  void aSchemaSetOnReadConnectionsOfADataSourceNeverReachesLaterOnes() throws Exception {
    String app = app();
    String url = "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?replica=" + cluster.replica(0).hostPort() + "&applicationName="
        + app + "&maxAge=1h&heartbeatInterval=100ms&user=" + cluster.user();
    try (OmniumDataSource ds = new OmniumDataSource(url)) {
      for (int i = 0; i < 3; i++) {
        try (OmniumConnection c = ds.read()) {
          assertEquals("public", c.getSchema()); // binds a primary session of the data source
          c.setSchema("tenant_a");
          assertEquals("tenant_a", one(c, "SELECT current_schema()"));
        }
      }
      for (int i = 0; i < 3; i++) {
        try (OmniumConnection c = ds.read()) {
          assertEquals("public", c.getSchema());
          assertEquals("public", one(c, "SELECT current_schema()"));
        }
      }
    }
  }

  @Test
  void jdbcStateOnThePooledPrimaryNeverReachesTheNextBorrower() throws Exception {
    String app = app();
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app))) {
      try (OmniumConnection c = ds.write()) {
        c.setSchema("tenant_a");
        c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
        c.setClientInfo("ApplicationName", "someone-else");
        assertEquals("tenant_a", one(c, "SELECT current_schema()"));
      }
      try (OmniumConnection c = ds.write()) {
        assertEquals("public", one(c, "SELECT current_schema()"));
        assertEquals("read committed", one(c, "SELECT current_setting('transaction_isolation')"));
        assertEquals(app, one(c, "SELECT current_setting('application_name')"));
      }
    }
  }

  @Test
  void jdbcStateOnAReplicaSessionNeverReachesTheNextBorrower() throws Exception {
    String app = app();
    awaitReplicaFresh(app);
    try (Connection c = DriverManager.getConnection(replicaUrl(app))) {
      c.setReadOnly(true);
      c.setSchema("tenant_a");
      assertEquals("t", one(c, "SELECT pg_is_in_recovery()"));
      assertEquals("tenant_a", one(c, "SELECT current_schema()"));
    }
    try (Connection c = DriverManager.getConnection(replicaUrl(app))) {
      c.setReadOnly(true);
      assertEquals("t", one(c, "SELECT pg_is_in_recovery()"));
      assertEquals("public", one(c, "SELECT current_schema()"));
    }
  }

  // ------------------------------------------------------------------ defect 3

  @Test
  void readRoutesStayReadOnlyWhateverAPreviousBorrowerRan() throws Exception {
    String app = app();
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app))) {
      for (String sql : new String[] {"SET default_transaction_read_only = off",
          "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE"}) {
        int pid;
        try (OmniumConnection c = ds.read(); Statement st = c.createStatement()) {
          st.execute(sql);
          pid = Integer.parseInt(one(c, "SELECT pg_backend_pid()"));
        }
        try (OmniumConnection c = ds.read(); Statement st = c.createStatement()) {
          SQLException e = assertThrows(SQLException.class,
              () -> st.executeUpdate("INSERT INTO t VALUES (1)"));
          assertEquals("25006", e.getSQLState(), sql);
          assertEquals("on", one(c, "SELECT current_setting('default_transaction_read_only')"));
          assertTrue(pid > 0);
        }
      }
    }
    assertEquals(0, count("t"));
  }

  @Test
  void aReportedSettingChangedOnAReadSessionIsResetBeforeTheNextBorrower() throws Exception {
    String app = app();
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app))) {
      String zone;
      try (OmniumConnection c = ds.read(); Statement st = c.createStatement()) {
        zone = one(c, "SELECT current_setting('TimeZone')");
        st.execute("SET TimeZone = 'Pacific/Chatham'");
        st.execute("SET DateStyle = 'ISO, DMY'");
      }
      try (OmniumConnection c = ds.read()) {
        assertEquals(zone, one(c, "SELECT current_setting('TimeZone')"));
        assertEquals("ISO, MDY", one(c, "SELECT current_setting('DateStyle')"));
      }
    }
  }

  /**
   * Raw SQL that changes search_path on a pooled session (the DataSource's primary pool, the
   * fallback pool) is undone before the next borrower, also on PostgreSQL 15 where the server
   * does not report search_path: the driver saw the SQL. Pools of one session: the second
   * borrower gets the very session the first changed (same backend pid).
   */
  @Test
  void aRawSearchPathOnAPooledSessionNeverReachesTheNextBorrower() throws Exception {
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app()))) {
      String[] changes = {"SET search_path = tenant_a",
          "SELECT set_config('search_path', 'tenant_a', false)"};
      for (String sql : changes) {
        nextBorrowerSeesPublic(ds, sql, false); // the primary pool
        nextBorrowerSeesPublic(ds, sql, true); // the fallback pool
      }
    }
  }

  private static void nextBorrowerSeesPublic(OmniumDataSource ds, String sql, boolean readOnly)
      throws SQLException {
    String what = sql + (readOnly ? ", read-only" : ", read-write");
    String pid;
    try (OmniumConnection c = readOnly ? ds.read() : ds.write();
         Statement st = c.createStatement()) {
      st.execute(sql);
      assertEquals("tenant_a", one(c, "SELECT current_schema()"), what);
      pid = one(c, "SELECT pg_backend_pid()");
    }
    try (OmniumConnection c = readOnly ? ds.read() : ds.write()) {
      assertEquals(pid, one(c, "SELECT pg_backend_pid()"), "the same pooled session: " + what);
      assertEquals("public", one(c, "SELECT current_schema()"), what);
      assertEquals("public", c.getSchema(), what);
    }
  }

  /**
   * Measures what the session-state work costs a unit of work (no assertion on time), on one
   * pooled fallback session: two SELECTs (clean); a raw SET and a SELECT (reset on return); a
   * call the driver cannot classify and a SELECT (reset and check on return); and, on a driver
   * connection that set one setting with SQL earlier, an autocommit read (replayed at bind, reset
   * on return). Prints the figures; asserts only that each dirty session was lent back clean.
   */
  @Test
  void theCostOfAResetOnReturnIsMeasured() throws Exception {
    String app = app();
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app));
         Connection held = DriverManager.getConnection(fallbackOnlyUrl(app + "d"))) {
      String zone;
      try (OmniumConnection c = ds.read()) {
        zone = one(c, "SELECT current_setting('TimeZone')");
      }
      held.setReadOnly(true);
      try (Statement st = held.createStatement()) {
        st.execute("SET DateStyle = 'ISO, DMY'");
      }
      int rounds = 300;
      long[][] t = new long[4][rounds];
      String[] second = {"SELECT 1", "SET TimeZone = 'Pacific/Chatham'",
          "SELECT pg_catalog.textlen('x')"};
      for (int i = -50; i < rounds; i++) { // 50 rounds of warm-up
        for (int k = 0; k < 3; k++) {
          long t0 = System.nanoTime();
          try (OmniumConnection c = ds.read(); Statement st = c.createStatement()) {
            st.execute(second[k]);
            st.execute("SELECT 2");
          }
          if (i >= 0) t[k][i] = System.nanoTime() - t0;
        }
        long t0 = System.nanoTime();
        try (Statement st = held.createStatement()) {
          st.execute("SELECT 2");
        }
        if (i >= 0) t[3][i] = System.nanoTime() - t0;
      }
      try (OmniumConnection c = ds.read()) {
        assertEquals(zone, one(c, "SELECT current_setting('TimeZone')"));
      }
      assertEquals("ISO, DMY", one(held, "SELECT current_setting('DateStyle')"));
      for (long[] a : t) Arrays.sort(a);
      System.out.printf("omnium figures: session state on return, PG %s: unit of work median %d us"
          + " clean, %d us with a reset, %d us with a reset and check, %d us for an autocommit"
          + " read replaying one SQL setting (its own unit: bind, replay, read, reset); p90 %d /"
          + " %d / %d / %d us%n", cluster.version(), t[0][rounds / 2] / 1000,
          t[1][rounds / 2] / 1000, t[2][rounds / 2] / 1000, t[3][rounds / 2] / 1000,
          t[0][rounds * 9 / 10] / 1000, t[1][rounds * 9 / 10] / 1000,
          t[2][rounds * 9 / 10] / 1000, t[3][rounds * 9 / 10] / 1000);
    }
  }

  // ------------------------------------------------------------------ defect 5

  @Test
  void aFailedBatchIsEmptied() throws Exception {
    String app = app();
    try (Statement admin = cluster.connect(cluster.primary()).createStatement()) {
      admin.execute("CREATE TABLE batch5 (v int PRIMARY KEY)");
    }
    try (Connection c = DriverManager.getConnection(fallbackOnlyUrl(app));
         Statement st = c.createStatement()) {
      st.addBatch("INSERT INTO batch5 VALUES (1)");
      st.addBatch("INSERT INTO batch5 VALUES (1)");
      assertThrows(SQLException.class, st::executeBatch);
      st.addBatch("INSERT INTO batch5 VALUES (2)");
      assertEquals(1, st.executeBatch().length);
    }
    try (Connection c = cluster.connect(cluster.primary())) {
      assertEquals("2", one(c, "SELECT string_agg(v::text, ',') FROM batch5"));
    }
  }

  // ------------------------------------------------------------------ defect 6

  @Test
  void metadataRunsOnTheCurrentBindingAndShowsTheOmniumUrl() throws Exception {
    String app = app();
    Properties p = new Properties();
    p.setProperty("password", "s3cret-pw");
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app), p)) {
      DatabaseMetaData md;
      try (OmniumConnection c = ds.read()) {
        md = c.getMetaData();
        assertTrue(md.getURL().startsWith("jdbc:omnium:postgresql://"), md.getURL());
        assertFalse(md.getURL().contains("s3cret-pw"), md.getURL());
        // one metadata object per connection, as pgjdbc keeps one
        assertSame(md, c.getMetaData());
        try (Connection other = ds.getConnection()) {
          assertEquals(md.getURL(), other.getMetaData().getURL());
        }
        one(c, "SELECT 1");
        c.setReadOnly(false);
        // the read binding is gone: metadata follows to the primary, never the pooled session
        try (ResultSet rs = md.getSchemas()) {
          assertTrue(rs.next());
        }
        assertEquals(app, one(c, "SELECT current_setting('application_name')"));
        try (ResultSet rs = c.getMetaData().getTables(null, "tenant_a", "t", null)) {
          assertTrue(rs.next());
        }
      }
    }
  }

  @Test
  void arraysCreatedOnAReadConnectionStayUsableAfterItsBindingIsGone() throws Exception {
    String app = app();
    try (OmniumDataSource ds = new OmniumDataSource(fallbackOnlyUrl(app));
         OmniumConnection c = ds.read()) {
      Array a = c.createArrayOf("int4", new Object[] {1, 2, 3});
      c.setReadOnly(false);
      try (PreparedStatement ps = c.prepareStatement("SELECT cardinality(?::int[])")) {
        ps.setArray(1, a);
        try (ResultSet rs = ps.executeQuery()) {
          assertTrue(rs.next());
          assertEquals(3, rs.getInt(1));
        }
      }
      Object[] values = (Object[]) a.getArray();
      assertEquals(3, values.length);
    }
  }

  // ------------------------------------------------------------------ defect 7

  @Test
  void warningsAreAListNotACycle() throws Exception {
    String app = app();
    try (Connection c = DriverManager.getConnection(fallbackOnlyUrl(app))) {
      one(c, "SELECT 1"); // binds the primary
      c.setReadOnly(true);
      c.setAutoCommit(false);
      one(c, "SELECT 2"); // binds the read route: both sessions are bound now
      // pgjdbc warns on the connection for a client-info name it does not support
      c.setClientInfo("NotAPgjdbcProperty", "x");
      for (int i = 0; i < 3; i++) {
        int n = 0;
        for (SQLWarning x = c.getWarnings(); x != null; x = x.getNextWarning()) {
          assertTrue(++n < 100, "warning chain loops");
        }
        assertEquals(2, n, "one warning per session");
      }
      c.rollback();
    }
  }

  // ------------------------------------------------------------------ defect 9

  @Test
  void wrappersAnswerHonestlyBeforeTheFirstExecute() throws Exception {
    String app = app();
    try (Connection c = DriverManager.getConnection(fallbackOnlyUrl(app));
         Statement st = c.createStatement()) {
      assertTrue(st.isWrapperFor(PGStatement.class));
      assertNotNull(st.unwrap(PGStatement.class));
      try (PreparedStatement ps = c.prepareStatement("SELECT 1")) {
        assertTrue(ps.isWrapperFor(PGStatement.class));
      }
    }
  }

  @Test
  void propertyInfoNeverShowsThePassword() throws Exception {
    Properties p = new Properties();
    p.setProperty("password", "s3cret-pw");
    DriverPropertyInfo[] info = new OmniumDriver().getPropertyInfo(fallbackOnlyUrl(app()), p);
    for (DriverPropertyInfo d : info) {
      if (d.value != null) assertFalse(d.value.contains("s3cret-pw"), d.name);
    }
  }

  // ------------------------------------------------------------------ holdability (defect 4)

  @Test
  void holdabilityIsPgjdbcsDefault() throws Exception {
    try (Connection pg = cluster.connect(cluster.primary());
         Connection c = DriverManager.getConnection(fallbackOnlyUrl(app()))) {
      assertEquals(pg.getHoldability(), c.getHoldability());
    }
  }
}
