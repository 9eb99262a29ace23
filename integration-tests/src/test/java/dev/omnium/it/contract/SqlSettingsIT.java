package dev.omnium.it.contract;

import static dev.omnium.it.contract.PoolsOfOne.one;
import static dev.omnium.it.contract.PoolsOfOne.url;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 32, item 4: session settings set with SQL follow the logical connection, as they follow
 * a pgjdbc connection: {@code SET}, {@code RESET} and {@code set_config(…, false)} outside a
 * transaction (or in one that commits), HikariCP's {@code connectionInitSql} included, reach every
 * session the connection binds, replica sessions included, and are undone before a pooled session
 * is lent again. A pooled session on which the driver saw SQL whose effect a reset cannot undo
 * with certainty is closed; one that ran a call the driver cannot classify is reset, checked once,
 * and lent again when nothing is left. Asserted on the servers: {@code current_setting},
 * {@code pg_is_in_recovery()}, the backend pid and {@code pg_stat_activity}.
 */
class SqlSettingsIT {
  private static final AtomicInteger APPS = new AtomicInteger();
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE items (id int)", "INSERT INTO items VALUES (1)",
          "CREATE SCHEMA tenant_a", "CREATE TABLE tenant_a.items (id int)",
          "INSERT INTO tenant_a.items VALUES (1), (2), (3)",
          "CREATE FUNCTION it_plain(x int) RETURNS int LANGUAGE sql AS $$ SELECT x + 1 $$",
          "CREATE FUNCTION it_tenant_a() RETURNS text LANGUAGE sql"
              + " AS $$ SELECT set_config('search_path', 'tenant_a', false) $$",
          "CREATE FUNCTION it_lock() RETURNS void LANGUAGE sql"
              + " AS $$ SELECT pg_advisory_lock(777) $$",
          "CREATE FUNCTION it_prepare() RETURNS void LANGUAGE plpgsql"
              + " AS $$ BEGIN EXECUTE 'PREPARE it_hidden AS SELECT 1'; END $$")
      .build();
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
  }

  static String app() {
    return "sqs" + APPS.incrementAndGet();
  }

  /** items counted where the connection's statements resolve it, with the server's view. */
  static String seen(Connection c) throws SQLException {
    return one(c, "SELECT count(*) || ' ' || current_setting('search_path') || ' '"
        + " || pg_is_in_recovery() FROM items");
  }

  static void awaitReplica(String url) throws Exception {
    Poll.until(Duration.ofSeconds(60), "reads on the replica", () -> {
      try (Connection c = DriverManager.getConnection(url)) {
        c.setReadOnly(true);
        return "t".equals(one(c, "SELECT pg_is_in_recovery()"));
      }
    });
  }

  static HikariDataSource hikari(String url, String initSql, boolean autoCommit) {
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(url);
    hc.setUsername(cluster.user());
    hc.setMaximumPoolSize(2);
    hc.setMinimumIdle(0);
    hc.setAutoCommit(autoCommit);
    hc.setConnectionInitSql(initSql);
    // without auto-commit, HikariCP commits the init SQL only when asked to: else it stays in
    // an open transaction, where pgjdbc refuses setReadOnly
    hc.setIsolateInternalQueries(!autoCommit);
    return new HikariDataSource(hc);
  }

  /** Counts items in a read-only unit of work (autocommit or a transaction, as the pool lends). */
  static String readOnlyCount(HikariDataSource pool) throws SQLException {
    try (Connection c = pool.getConnection()) {
      c.setReadOnly(true);
      String s = seen(c);
      if (!c.getAutoCommit()) c.commit();
      return s;
    }
  }

  /**
   * The multi-tenant setup: HikariCP's connectionInitSql sets the search_path. With
   * pgjdbc every statement of the connection resolves {@code items} in tenant_a; through omnium,
   * read-only work on the replica too, whether the pool lends connections in autocommit or not.
   */
  @Test
  void connectionInitSqlReachesReadOnlyWork() throws Exception {
    String app = app();
    String url = url(cluster, app, true);
    awaitReplica(url);
    String plainUrl = "jdbc:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database();
    for (boolean autoCommit : new boolean[] {true, false}) {
      try (HikariDataSource pg = hikari(plainUrl, "SET search_path TO tenant_a", autoCommit);
           HikariDataSource omnium = hikari(url, "SET search_path TO tenant_a", autoCommit)) {
        assertEquals("3 tenant_a false", readOnlyCount(pg), "pgjdbc");
        for (int i = 0; i < 5; i++) {
          assertEquals("3 tenant_a true", readOnlyCount(omnium),
              "read-only work through omnium, on the replica (autoCommit " + autoCommit + ")");
        }
      }
    }
  }

  /** Settings set in read-write work reach read-only work on the replica, and back. */
  @Test
  void settingsFollowTheConnectionToEveryRoute() throws Exception {
    String app = app();
    String url = url(cluster, app, true);
    awaitReplica(url);
    try (Connection c = DriverManager.getConnection(url)) {
      try (Statement st = c.createStatement()) {
        st.execute("SET search_path TO tenant_a");
      }
      assertEquals("3 tenant_a false", seen(c));
      c.setReadOnly(true);
      assertEquals("3 tenant_a true", seen(c), "an autocommit read on the replica");
      c.setAutoCommit(false);
      assertEquals("3 tenant_a true", seen(c), "a read-only transaction on the replica");
      c.commit();
      c.setAutoCommit(true);
      // set in read-only work: the next read-only statement and the primary see it
      try (Statement st = c.createStatement()) {
        st.execute("SET TimeZone = 'Pacific/Chatham'");
      }
      assertEquals("Pacific/Chatham true",
          one(c, "SELECT current_setting('TimeZone') || ' ' || pg_is_in_recovery()"));
      try (PreparedStatement ps =
          c.prepareStatement("SELECT set_config('search_path', ?, false)")) {
        ps.setString(1, "public");
        ps.executeQuery().close();
      }
      assertEquals("1 public true", seen(c), "a bound set_config value");
      c.setReadOnly(false);
      assertEquals("Pacific/Chatham false",
          one(c, "SELECT current_setting('TimeZone') || ' ' || pg_is_in_recovery()"));
      assertEquals("1 public false", seen(c));
      try (Statement st = c.createStatement()) {
        st.execute("RESET TimeZone");
      }
      c.setReadOnly(true);
      assertNotEquals("Pacific/Chatham", one(c, "SELECT current_setting('TimeZone')"));
    }
  }

  /** A session's backend pid and whether the server still has it. */
  static boolean alive(String pid) throws SQLException {
    for (int node = 0; node < 2; node++) {
      try (Connection admin = cluster.connect(node == 0 ? cluster.primary() : cluster.replica(0))) {
        if (!"0".equals(one(admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid))) {
          return true;
        }
      }
    }
    return false;
  }

  /** What a reset could not undo on a session: prepared statements, cursors, temp, listens. */
  static final String LEFT = "SELECT (SELECT count(*) FROM pg_prepared_statements WHERE from_sql)"
      + " || ' ' || (SELECT count(*) FROM pg_cursors WHERE is_holdable) || ' '"
      + " || (SELECT count(*) FROM pg_listening_channels()) || ' '"
      + " || (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
      + " AND pid = pg_backend_pid()) || ' ' || current_setting('search_path')";

  /**
   * Runs {@code work} on a pooled session (read-only: the fallback pool; read-write: the primary
   * pool of the data source, each of one session), then borrows again: the next borrower sees
   * nothing of it, and gets the same backend ({@code lent}) or a new one (the old one closed).
   */
  static void nextBorrower(OmniumDataSource ds, boolean readOnly, String work, boolean lent)
      throws Exception {
    String pid;
    try (OmniumConnection c = readOnly ? ds.read() : ds.write()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute(work);
        try (ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
          assertTrue(rs.next());
          pid = rs.getString(1);
        }
      }
      c.commit();
    }
    try (OmniumConnection c = readOnly ? ds.read() : ds.write()) {
      assertEquals("0 0 0 0 \"$user\", public", one(c, LEFT), work);
      String next = one(c, "SELECT pg_backend_pid()");
      if (lent) {
        assertEquals(pid, next, "reset and lent again: " + work);
      } else {
        assertNotEquals(pid, next, "closed, not lent: " + work);
      }
    }
    if (!lent) Poll.until(Duration.ofSeconds(10), "session " + pid + " closed", () -> !alive(pid));
  }

  @Test
  void stateAResetCannotUndoClosesThePooledSession() throws Exception {
    try (OmniumDataSource ds = new OmniumDataSource(url(cluster, app(), false))) {
      long closedBefore = ds.metrics().getSessionsClosedForState();
      Map<String, Boolean> works = new LinkedHashMap<>(); // work -> also in read-only work
      works.put("PREPARE it_p AS SELECT 1", true);
      works.put("DECLARE it_c CURSOR WITH HOLD FOR SELECT 1", true);
      works.put("SELECT pg_advisory_lock(4242)", true);
      works.put("LISTEN it_channel", true);
      works.put("CREATE TEMP TABLE it_t (x int)", false); // not in a read-only transaction
      works.put("SELECT it_prepare()", true); // a call: checked, something found
      int n = 0;
      for (Map.Entry<String, Boolean> w : works.entrySet()) {
        nextBorrower(ds, false, w.getKey(), false);
        n++;
        if (w.getValue()) {
          nextBorrower(ds, true, w.getKey(), false);
          n++;
        }
      }
      assertEquals(n, ds.metrics().getSessionsClosedForState() - closedBefore);
    }
  }

  @Test
  void callsTheDriverCannotClassifyAreCheckedAndTheSessionLentAgain() throws Exception {
    try (OmniumDataSource ds = new OmniumDataSource(url(cluster, app(), false))) {
      for (boolean readOnly : new boolean[] {false, true}) {
        long closedBefore = ds.metrics().getSessionsClosedForState();
        nextBorrower(ds, readOnly, "SELECT it_plain(1)", true);
        nextBorrower(ds, readOnly, "SELECT it_tenant_a()", true); // undone by the reset
        nextBorrower(ds, readOnly, "SELECT it_lock()", true); // released by the reset
        nextBorrower(ds, readOnly, "SELECT 1; SELECT it_plain(2)", true);
        assertEquals(closedBefore, ds.metrics().getSessionsClosedForState());
      }
    }
  }

  /** Ordinary work neither resets nor closes a pooled session. */
  @Test
  void ordinaryWorkNeitherResetsNorClosesASession() throws Exception {
    try (OmniumDataSource ds = new OmniumDataSource(url(cluster, app(), false))) {
      String pid = null;
      for (int i = 0; i < 20; i++) {
        try (OmniumConnection c = i % 2 == 0 ? ds.read() : ds.write()) {
          c.setAutoCommit(i % 4 < 2);
          try (PreparedStatement ps = c.prepareStatement(
              "SELECT count(*), max(id), coalesce(sum(id), 0), now() FROM items WHERE id > ?")) {
            ps.setInt(1, i);
            ps.executeQuery().close();
          }
          if (!c.getAutoCommit()) c.commit();
          if (i == 0) pid = one(c, "SELECT pg_backend_pid()");
        }
      }
      assertEquals(0, ds.metrics().getSessionResets());
      assertEquals(0, ds.metrics().getSessionsClosedForState());
      try (OmniumConnection c = ds.read()) {
        assertEquals(pid, one(c, "SELECT pg_backend_pid()"), "the same fallback session");
      }
    }
  }
}
