package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgBouncer;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import dev.omnium.sandbox.testkit.Where;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Omnium through PgBouncer (Debian's 1.18, in front of the primary and of the replica), with
 * PgBouncer's default configuration and {@code prepareThreshold=0} in the URL, nothing else: what
 * every route promises holds in every transaction, as the servers saw it, and nothing omnium does
 * leaves session state on a server session the bouncer shares with other clients. Run for
 * transaction pooling, session pooling and transaction pooling with
 * {@code ignore_startup_parameters = options} (subclasses), on PostgreSQL 18 and 15. In package
 * {@code dev.omnium.jdbc} for {@link HealthCheck} ({@code check}).
 */
abstract class PgBouncerSuite {
  private static final AtomicInteger APPS = new AtomicInteger();
  static final String TIMEOUTS = "statementTimeout=3s&replicaStatementTimeout=2s"
      + "&idleInTransactionTimeout=30s&lockTimeout=700ms";

  static PgSandbox.Builder sandbox(PgBouncer.Mode mode) {
    return PgSandbox.builder().replicas(1).pgbouncer(mode)
        .sql("CREATE TABLE bounced (id int PRIMARY KEY, v text)",
            "CREATE TABLE seen (id serial PRIMARY KEY, v text)",
            "INSERT INTO bounced SELECT g, 'row' || g FROM generate_series(1, 10) g");
  }

  abstract PgSandbox sandbox();

  /**
   * Whether the bouncer pins a server session to each client and resets it when the client leaves
   * (session pooling with PgBouncer's default server_reset_query), which omnium proves: its
   * sessions then set their settings once each, nothing per transaction.
   */
  boolean pinsSessions() {
    return false;
  }

  /**
   * Each test's routers close after it: with session pooling every omnium session holds one of the
   * bouncer's server sessions (PgBouncer's default: 20 per database and user), and a router keeps
   * replicaPoolSize of them idle until routerIdleTimeout.
   */
  @AfterEach
  void closeRouters() {
    OmniumDriver.shutdown();
  }

  String app() {
    return getClass().getSimpleName().replace("PgBouncer", "").replace("IT", "").toLowerCase()
        + APPS.incrementAndGet();
  }

  /** Through the bouncers, with the suite's timeouts. */
  String url(String app, String extra) {
    return sandbox().bouncedUrl(app, "heartbeatInterval=200ms&maxAge=2s&" + TIMEOUTS
        + (extra == null ? "" : "&" + extra));
  }

  /** Through the primary's bouncer, no replica: read-only work takes the fallback route. */
  String fallbackUrl(String app) {
    String url = url(app, null);
    return url.replaceAll("&replica=[^&]*", "");
  }

  Connection open(String app) throws SQLException {
    return DriverManager.getConnection(url(app, null));
  }

  static void awaitReplica(Connection c) throws Exception {
    String app = c.unwrap(OmniumConnection.class).router().config.applicationName();
    try {
      Poll.until(Duration.ofSeconds(30), "a read on the replica", () -> {
        // a transaction keeps its route until it ends: each try begins a new one
        if (!c.getAutoCommit()) c.rollback();
        c.setReadOnly(true);
        return Where.of(c).inRecovery();
      });
    } catch (AssertionError e) {
      RouterMXBean r = RouterBean.of(app);
      throw new AssertionError(e.getMessage() + "; the router says: states "
          + r.getReplicaStates() + ", lag " + r.getEffectiveLagMillis() + " ms, acquire failures "
          + r.getReplicaAcquireFailures(), e);
    }
  }

  static String one(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /** Timeouts and read-only state of the transaction a query runs in, as the server has them. */
  static final String SETTINGS = "SELECT current_setting('statement_timeout'),"
      + " current_setting('idle_in_transaction_session_timeout'),"
      + " current_setting('lock_timeout'), current_setting('transaction_read_only'),"
      + " pg_is_in_recovery(), current_setting('application_name')";

  static List<String> settings(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SETTINGS); ResultSet rs = ps.executeQuery()) {
      rs.next();
      List<String> out = new ArrayList<>();
      for (int i = 1; i <= 6; i++) out.add(rs.getString(i));
      return out;
    }
  }

  /**
   * Without the idle-in-transaction timeout, which an autocommit statement never reaches (behind
   * a pooler it is not set for one).
   */
  static List<String> autocommit(List<String> settings) {
    List<String> out = new ArrayList<>(settings);
    out.remove(1);
    return out;
  }

  // ---------------------------------------------------------------- it connects

  @Test
  void connectsAndRoutesWithTheBouncersDefaults() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      Where w = Where.of(c);
      assertEquals(sandbox().primary().port(), w.port(), "writes reach the primary");
      assertFalse(w.inRecovery());
      assertEquals(app, w.applicationName());
      try (Statement st = c.createStatement()) {
        assertEquals(1, st.executeUpdate("UPDATE bounced SET v = 'written' WHERE id = 1"));
      }
      awaitReplica(c);
      Where r = Where.of(c);
      assertEquals(sandbox().replica().port(), r.port());
      assertEquals(app + ":replica", r.applicationName());
      c.setAutoCommit(false);
      assertTrue(Where.of(c).inRecovery(), "a read-only transaction on the replica");
      c.commit();
    }
  }

  // ---------------------------------------------------------------- timeouts and read-only

  @Test
  void everyTransactionOnEveryRouteHasItsTimeoutsAndReadOnlyState() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      for (int i = 0; i < 10; i++) {
        c.setReadOnly(false);
        c.setAutoCommit(true);
        assertEquals(List.of("3s", "700ms", "off", "f", app), autocommit(settings(c)),
            "autocommit on the primary");
        c.setAutoCommit(false);
        assertEquals(List.of("3s", "30s", "700ms", "off", "f", app), settings(c),
            "a transaction on the primary");
        c.commit();
      }
      awaitReplica(c);
      for (int i = 0; i < 10; i++) {
        c.setAutoCommit(true);
        assertEquals(List.of("2s", "0", "on", "t", app + ":replica"), autocommit(settings(c)),
            "an autocommit read on the replica");
        c.setAutoCommit(false);
        assertEquals(List.of("2s", "30s", "0", "on", "t", app + ":replica"), settings(c),
            "a read-only transaction on the replica");
        c.commit();
      }
    }
    String fallback = app();
    try (Connection c = DriverManager.getConnection(fallbackUrl(fallback))) {
      c.setReadOnly(true);
      for (int i = 0; i < 10; i++) {
        c.setAutoCommit(true);
        assertEquals(List.of("3s", "700ms", "on", "f", fallback + ":fallback"),
            autocommit(settings(c)), "an autocommit read on the fallback route");
        c.setAutoCommit(false);
        assertEquals(List.of("3s", "30s", "700ms", "on", "f", fallback + ":fallback"),
            settings(c), "a read-only transaction on the fallback route");
        c.commit();
      }
    }
  }

  @Test
  void theStatementTimeoutCancelsOnEveryRoute() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      assertEquals("57014", sqlState(c, "SELECT pg_sleep(10)"), "the primary, autocommit");
      awaitReplica(c);
      assertEquals("57014", sqlState(c, "SELECT pg_sleep(10)"), "the replica, autocommit");
      c.setAutoCommit(false);
      assertEquals("57014", sqlState(c, "SELECT pg_sleep(10)"), "the replica, a transaction");
      c.rollback();
    }
  }

  @Test
  void aWriteInReadOnlyWorkFails25006OnEveryRoute() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      awaitReplica(c);
      assertEquals("25006", sqlState(c, "UPDATE bounced SET v = 'replica' WHERE id = 2"));
      c.setAutoCommit(false);
      assertEquals("25006", sqlState(c, "UPDATE bounced SET v = 'replica tx' WHERE id = 2"));
      c.rollback();
    }
    try (Connection c = DriverManager.getConnection(fallbackUrl(app()))) {
      c.setReadOnly(true);
      assertEquals("25006", sqlState(c, "INSERT INTO bounced VALUES (100, 'fallback')"));
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO bounced VALUES (?, ?)")) {
        ps.setInt(1, 101);
        ps.setString(2, "fallback prepared");
        assertEquals("25006", assertThrows(SQLException.class, ps::executeUpdate).getSQLState());
      }
      c.setAutoCommit(false);
      assertEquals("25006", sqlState(c, "INSERT INTO bounced VALUES (102, 'fallback tx')"));
      c.rollback();
    }
    assertNull(sandbox().queryOne(sandbox().primary(),
        "SELECT v FROM bounced WHERE id >= 100 OR v LIKE 'replica%'"), "nothing was written");
  }

  @Test
  void statementsOfEveryKindCarryTheSettingsOfTheirTransaction() throws Exception {
    String app = app();
    String seen = "INSERT INTO seen (v) VALUES (current_setting('statement_timeout') || ' '"
        + " || current_setting('transaction_isolation'))";
    try (Connection c = open(app)) {
      sandbox().execOnPrimary("TRUNCATE seen");
      try (Statement st = c.createStatement()) {
        assertEquals(3, st.executeUpdate("UPDATE bounced SET v = 'u' WHERE id <= 3"));
        st.addBatch(seen);
        st.addBatch(seen);
        assertArrayEquals(new int[] {1, 1}, st.executeBatch(), "a batch in autocommit");
        assertTrue(st.execute("SELECT current_setting('statement_timeout'); SELECT 2"));
        try (ResultSet rs = st.getResultSet()) {
          rs.next();
          assertEquals("3s", rs.getString(1), "the first result is the application's");
        }
        assertTrue(st.getMoreResults());
        assertEquals("02000", assertThrows(SQLException.class,
            () -> st.executeQuery("UPDATE bounced SET v = 'q' WHERE id = 5")).getSQLState());
        st.execute("BEGIN"); // a transaction begun with SQL: its next statement brings them
        assertEquals("3s", one(c, "SELECT current_setting('statement_timeout')"));
        st.execute("COMMIT");
      }
      try (PreparedStatement ps = c.prepareStatement(seen, Statement.RETURN_GENERATED_KEYS)) {
        assertEquals(1, ps.executeUpdate());
        try (ResultSet keys = ps.getGeneratedKeys()) {
          assertTrue(keys.next(), "generated keys in autocommit");
        }
      }
      try (PreparedStatement ps = c.prepareStatement(seen)) {
        ps.addBatch();
        ps.addBatch();
        assertArrayEquals(new int[] {1, 1}, ps.executeBatch());
      }
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        st.executeUpdate(seen);
        st.addBatch(seen);
        st.executeBatch();
      }
      c.commit();
      try (PreparedStatement ps = c.prepareStatement(seen, Statement.RETURN_GENERATED_KEYS)) {
        assertEquals(1, ps.executeUpdate(), "generated keys first in a transaction");
      }
      c.commit();
      c.setAutoCommit(true);
    }
    assertEquals("3s read committed=6, 3s repeatable read=2", sandbox().queryOne(
        sandbox().primary(), "SELECT string_agg(v || '=' || n, ', ' ORDER BY v)"
            + " FROM (SELECT v, count(*) n FROM seen GROUP BY v) s"),
        "what the transaction of each statement had");
    try (Connection c = open(app())) {
      awaitReplica(c);
      try (CallableStatement cs = c.prepareCall("{? = call current_setting(?)}")) {
        cs.registerOutParameter(1, Types.VARCHAR);
        cs.setString(2, "statement_timeout");
        cs.execute();
        assertEquals("2s", cs.getString(1), "a callable read in autocommit");
        cs.setString(2, "transaction_read_only");
        cs.execute();
        assertEquals("on", cs.getString(1));
      }
    }
    try (Connection c = DriverManager.getConnection(fallbackUrl(app()))) {
      c.setReadOnly(true);
      try (PreparedStatement ps = c.prepareStatement(seen, Statement.RETURN_GENERATED_KEYS)) {
        assertEquals("25006", assertThrows(SQLException.class, ps::executeUpdate).getSQLState());
      }
      try (Statement st = c.createStatement()) {
        st.addBatch(seen);
        SQLException e = assertThrows(SQLException.class, st::executeBatch);
        assertEquals("25006", (e.getNextException() != null ? e.getNextException() : e)
            .getSQLState(), "a batch on the fallback route");
      }
    }
  }

  /**
   * The settings ride with a transaction's first statement and take no snapshot (a one-statement
   * {@code SELECT set_config(...)} would: it also measured slower than the {@code SET LOCAL}s): a
   * repeatable-read transaction that locks first sees what committed between its lock and its
   * first query, as with pgjdbc, and {@code SET TRANSACTION} may still follow a {@code SET LOCAL}.
   */
  @Test
  void theSettingsTakeNoSnapshotBeforeTheTransactionsOwnFirstQuery() throws Exception {
    try (Connection c = open(app())) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        st.execute("LOCK TABLE bounced IN ACCESS SHARE MODE");
        sandbox().execOnPrimary("INSERT INTO bounced VALUES (101, 'after the lock')");
        assertEquals("after the lock", one(c, "SELECT v FROM bounced WHERE id = 101"),
            "the snapshot is the first query's, taken after the other commit");
        assertEquals("3s", one(c, "SELECT current_setting('statement_timeout')"));
        c.commit();
        st.execute("SET LOCAL work_mem = '8MB'");
        st.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
        assertEquals("serializable 3s 8MB", one(c, "SELECT current_setting('transaction_isolation')"
            + " || ' ' || current_setting('statement_timeout') || ' '"
            + " || current_setting('work_mem')"));
        c.commit();
      } finally {
        sandbox().execOnPrimary("DELETE FROM bounced WHERE id = 101");
      }
    }
  }

  /**
   * A RESET goes back to the route's settings, not to the server's defaults, whichever way the
   * sessions got them: a read route stays read-only and keeps its timeouts. (No application
   * {@code SET} before it: through transaction pooling that would stay on whichever server session
   * ran it, as with plain pgjdbc.)
   */
  @Test
  void aResetByTheApplicationKeepsTheRoutesSettings() throws Exception {
    try (Connection c = DriverManager.getConnection(fallbackUrl(app()))) {
      c.setReadOnly(true);
      for (String reset : List.of("RESET ALL", "DISCARD ALL", "RESET statement_timeout")) {
        try (Statement st = c.createStatement()) {
          st.execute(reset);
        }
        assertEquals("25006", sqlState(c, "INSERT INTO bounced VALUES (103, 'after a reset')"),
            "a write after " + reset + " on the fallback route");
        assertEquals(List.of("3s", "700ms", "on", "f"), autocommit(settings(c)).subList(0, 4),
            "an autocommit read after " + reset);
        c.setAutoCommit(false);
        assertEquals(List.of("3s", "30s", "700ms", "on", "f"), settings(c).subList(0, 5),
            "a read-only transaction after " + reset);
        c.commit();
        c.setAutoCommit(true);
      }
    }
    try (Connection c = open(app())) {
      try (Statement st = c.createStatement()) {
        st.execute("RESET ALL");
      }
      assertEquals(List.of("3s", "700ms", "off", "f"), autocommit(settings(c)).subList(0, 4),
          "the primary after RESET ALL");
    }
    assertNull(sandbox().queryOne(sandbox().primary(),
        "SELECT v FROM bounced WHERE id = 103"), "nothing was written");
  }

  /**
   * What the replica's server logged ({@code log_statement = all}) for a hundred read-only
   * transactions: no statement of omnium's own where the bouncer pins sessions (the session set
   * its settings once when it opened), the route's {@code SET LOCAL}s with each one otherwise.
   */
  @Test
  void aReadOnlyTransactionSendsItsSettingsOnlyWhereSessionsAreShared() throws Exception {
    String app = app();
    PgNode replica = sandbox().replica();
    try (Connection c = open(app)) {
      awaitReplica(c);
      c.setAutoCommit(false);
      one(c, "SELECT count(*) FROM bounced"); // the session is open before the log is
      c.commit();
      logStatements(replica, true);
      long from;
      long to;
      try {
        // a session takes the setting when it next finishes a command: wait for one of ours
        long start = Files.size(replica.logFile());
        Poll.until(Duration.ofSeconds(10), "a logged read of " + app, () -> {
          one(c, "SELECT 'omnium-read-marker'");
          c.commit();
          return logged(replica, start, Files.size(replica.logFile()))
              .contains("omnium-read-marker");
        });
        from = Files.size(replica.logFile());
        for (int i = 0; i < 100; i++) {
          assertEquals("t", one(c, "SELECT pg_is_in_recovery()"));
          c.commit();
        }
        assertEquals(List.of("2s", "30s", "0", "on", "t", app + ":replica"), settings(c));
        c.commit();
        to = Files.size(replica.logFile());
      } finally {
        logStatements(replica, false);
      }
      String log = logged(replica, from, to);
      long reads = log.lines().filter(l -> l.contains("SELECT pg_is_in_recovery()")).count();
      long settings = log.lines().filter(l -> l.contains("SET LOCAL statement_timeout")).count();
      assertEquals(100, reads, "the reads the replica logged");
      if (pinsSessions()) {
        assertEquals(0, settings, "SET LOCALs logged for 100 read-only transactions");
      } else {
        assertTrue(settings >= 100, settings + " SET LOCALs for 100 read-only transactions");
      }
    }
  }

  /** What {@code node} logged between two offsets of its log. */
  static String logged(PgNode node, long from, long to) throws IOException {
    byte[] all = Files.readAllBytes(node.logFile());
    int end = (int) Math.min(to, all.length);
    return new String(all, (int) from, Math.max(0, end - (int) from), StandardCharsets.UTF_8);
  }

  private void logStatements(PgNode node, boolean on) throws SQLException {
    try (Connection c = sandbox().cluster().connect(node); Statement st = c.createStatement()) {
      st.execute(on ? "ALTER SYSTEM SET log_statement = 'all'"
          : "ALTER SYSTEM RESET log_statement");
      st.execute("SELECT pg_reload_conf()");
    }
  }

  static String sqlState(Connection c, String sql) {
    return assertThrows(SQLException.class, () -> {
      try (Statement st = c.createStatement()) {
        st.execute(sql);
      }
    }, sql).getSQLState();
  }

  // ---------------------------------------------------------------- pooled sessions

  @Test
  void pooledReadSessionsAreReusedNotLoggedInAgain() throws Exception {
    String app = app();
    PgBouncer replicaBouncer = sandbox().bouncer(sandbox().replica());
    try (Connection c = open(app)) {
      awaitReplica(c);
      c.setAutoCommit(false);
      for (int i = 0; i < 20; i++) { // warm: the pool has its sessions
        one(c, "SELECT count(*) FROM bounced");
        c.commit();
      }
      long before = logins(replicaBouncer);
      for (int i = 0; i < 200; i++) {
        assertEquals("t", one(c, "SELECT pg_is_in_recovery()"));
        c.commit();
      }
      long logins = logins(replicaBouncer) - before;
      // the replica pool may still be filling up to its idle minimum (replicaPoolSize, 8)
      assertTrue(logins <= 8, logins + " logins on the replica's bouncer for 200 read-only"
          + " transactions");
    }
  }

  @Test
  void pooledFallbackSessionsAreReusedNotLoggedInAgain() throws Exception {
    String app = app();
    PgBouncer primaryBouncer = sandbox().bouncer(sandbox().primary());
    try (Connection c = DriverManager.getConnection(fallbackUrl(app))) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      for (int i = 0; i < 20; i++) { // warm: the pool has its sessions
        one(c, "SELECT count(*) FROM bounced");
        c.commit();
      }
      long before = logins(primaryBouncer);
      for (int i = 0; i < 200; i++) {
        assertEquals("f", one(c, "SELECT pg_is_in_recovery()"));
        c.commit();
      }
      long logins = logins(primaryBouncer) - before;
      // the fallback pool may still be filling up (fallbackPoolSize)
      assertTrue(logins <= 4, logins + " logins on the primary's bouncer for 200 read-only"
          + " transactions on the fallback route");
    }
  }

  /** Client logins the bouncer logged (log_connections, on by default). */
  static long logins(PgBouncer b) {
    return b.log().lines().filter(l -> l.contains("login attempt:")).count();
  }

  // ---------------------------------------------------------------- settings set with SQL

  /** The time zone and statement timeout of the transaction a query runs in, and its server. */
  static List<String> zoneTimeoutStandby(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
        "SELECT current_setting('TimeZone'), current_setting('statement_timeout'),"
            + " pg_is_in_recovery()")) {
      rs.next();
      return List.of(rs.getString(1), rs.getString(2), rs.getString(3));
    }
  }

  @Test
  void settingsSetWithSqlHoldInEachTransactionNotOnASharedSession() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      awaitReplica(c);
      c.setReadOnly(false);
      try (Statement st = c.createStatement()) {
        st.execute("SET TIME ZONE 'Asia/Tokyo'");
        st.execute("SET statement_timeout = '5s'");
      }
      RouterMXBean r = RouterBean.of(app);
      long resets = r.getSessionResets();
      // the primary: the application's values after the route's, as after a startup packet
      assertEquals(List.of("Asia/Tokyo", "5s", "f"), zoneTimeoutStandby(c), "autocommit");
      c.setAutoCommit(false);
      assertEquals(List.of("Asia/Tokyo", "5s", "f"), zoneTimeoutStandby(c), "a transaction");
      c.commit();
      // a read route: the application's time zone, the route's own timeout
      c.setReadOnly(true);
      for (int i = 0; i < 3; i++) {
        assertEquals(List.of("Asia/Tokyo", "2s", "t"), zoneTimeoutStandby(c),
            "read-only transaction " + i);
        c.commit();
      }
      c.setAutoCommit(true);
      assertEquals(List.of("Asia/Tokyo", "2s", "t"), zoneTimeoutStandby(c), "an autocommit read");
      if (pinsSessions()) {
        // as on a direct connection: the read sessions took the time zone, and a reset undid it
        // (the server's defaults, then the sessions' own settings) before they went back
        assertTrue(r.getSessionResets() > resets, "read sessions reset for state left on them");
      } else {
        // nothing was set on a read session the bouncer shares, so none needed a reset
        assertEquals(resets, r.getSessionResets(), "read sessions reset for state left on them");
      }
      try (Statement st = c.createStatement()) {
        st.execute("SET TIME ZONE 'Europe/Lisbon'"); // on the read route: a session of its own
      }
      c.setAutoCommit(false);
      assertEquals(List.of("Europe/Lisbon", "2s", "t"), zoneTimeoutStandby(c),
          "a read-only transaction after a setting changed on the read route");
      c.commit();
    }
  }

  // ---------------------------------------------------------------- shared server sessions

  @Test
  void omniumLeavesNoSessionStateOnSharedServerSessions() throws Exception {
    String app = app();
    try (Connection c = open(app)) {
      try (Statement st = c.createStatement()) {
        st.executeUpdate("UPDATE bounced SET v = 'x' WHERE id = 3");
      }
      awaitReplica(c);
      c.setAutoCommit(false);
      one(c, "SELECT count(*) FROM bounced");
      c.commit();
    }
    try (Connection c = DriverManager.getConnection(fallbackUrl(app()))) {
      c.setReadOnly(true);
      one(c, "SELECT count(*) FROM bounced");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = HealthCheck.run(url("check" + APPS.incrementAndGet(), null), new Properties(),
        false, new PrintStream(out, true, StandardCharsets.UTF_8));
    assertTrue(exit == 0 || exit == 1, "check ran:\n" + out.toString(StandardCharsets.UTF_8));
    // omnium's sessions go back to the bouncers (with session pooling PgBouncer's default 20 server
    // sessions per database and user are theirs until then); what omnium set on a server session
    // would stay there, and a transaction-pooled one was shared all along
    OmniumDriver.shutdown();
    for (PgNode node : List.of(sandbox().primary(), sandbox().replica())) {
      assertDefaults(node);
    }
  }

  /**
   * Eight plain pgjdbc clients of the bouncer hold a transaction each at once (eight server
   * sessions): each finds the server's own defaults, and on the primary each may write.
   */
  void assertDefaults(PgNode node) throws Exception {
    PgBouncer b = sandbox().bouncer(node);
    List<Connection> clients = new ArrayList<>();
    try {
      Map<String, List<String>> seen = new LinkedHashMap<>();
      for (int i = 0; i < 8; i++) {
        Properties p = new Properties();
        p.setProperty("user", sandbox().cluster().user());
        p.setProperty("prepareThreshold", "0");
        p.setProperty("socketTimeout", "30");
        Connection plain = DriverManager.getConnection(b.jdbcUrl(), p);
        clients.add(plain);
        plain.setAutoCommit(false);
        try (Statement st = plain.createStatement(); ResultSet rs = st.executeQuery(
            "SELECT pg_backend_pid(), current_setting('statement_timeout'),"
                + " current_setting('idle_in_transaction_session_timeout'),"
                + " current_setting('idle_session_timeout'), current_setting('lock_timeout'),"
                + " current_setting('default_transaction_read_only'),"
                + " current_setting('transaction_read_only'), current_setting('search_path')")) {
          rs.next();
          List<String> values = new ArrayList<>();
          for (int k = 2; k <= 8; k++) values.add(rs.getString(k));
          seen.put(rs.getString(1), values);
        }
        if (node == sandbox().primary()) {
          try (Statement st = plain.createStatement()) {
            st.executeUpdate("UPDATE bounced SET v = 'plain' WHERE id = " + (i + 1));
          }
        }
      }
      // a standby's transactions are read-only whatever the session says
      String readOnly = node == sandbox().primary() ? "off" : "on";
      for (Map.Entry<String, List<String>> e : seen.entrySet()) {
        assertEquals(List.of("0", "0", "0", "0", "off", readOnly, "\"$user\", public"),
            e.getValue(), node.name() + " server session " + e.getKey()
                + " as another client finds it");
      }
    } finally {
      for (Connection plain : clients) {
        plain.rollback();
        plain.close();
      }
    }
  }

  // ---------------------------------------------------------------- the heartbeat writer

  @Test
  void oneHeartbeatWriterIsElectedAndAnotherTakesOver() throws Exception {
    String table = "beat_" + getClass().getSimpleName().toLowerCase().replace("pgbouncer", "")
        .replace("it", "");
    String extra = "heartbeatWriter=true&heartbeatTable=" + table + "&heartbeatInterval=100ms";
    String a = app();
    String b = app();
    OmniumDataSource first = new OmniumDataSource(url(a, extra));
    OmniumDataSource second = new OmniumDataSource(url(b, extra));
    try {
      try (Connection c = first.getConnection(); Connection d = second.getConnection()) {
        one(c, "SELECT 1"); // both routers run
        one(d, "SELECT 1");
      }
      Poll.until(Duration.ofSeconds(20), "a heartbeat writer", () ->
          RouterBean.of(a).isHeartbeatLeader() || RouterBean.of(b).isHeartbeatLeader());
      int both = 0;
      int none = 0;
      for (int i = 0; i < 24; i++) {
        boolean la = RouterBean.of(a).isHeartbeatLeader();
        boolean lb = RouterBean.of(b).isHeartbeatLeader();
        if (la && lb) both++;
        if (!la && !lb) none++;
        Poll.pause(100);
      }
      assertEquals(0, both, "samples with two leaders");
      assertTrue(none <= 2, none + " samples without a leader");
      assertFresh(table);
      boolean aLeads = RouterBean.of(a).isHeartbeatLeader();
      (aLeads ? first : second).close();
      String survivor = aLeads ? b : a;
      Poll.until(Duration.ofSeconds(20), "the other writer to take over",
          () -> RouterBean.of(survivor).isHeartbeatLeader());
      assertFresh(table);
    } finally {
      first.close();
      second.close();
    }
  }

  void assertFresh(String table) throws Exception {
    Poll.until(Duration.ofSeconds(10), table + " written within the last second", () ->
        "t".equals(sandbox().queryOne(sandbox().primary(),
            "SELECT now() - beat_at < interval '1 second' FROM " + table)));
  }
}
