package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Suite 6, bad input: each gives a clear error (an SQLException with an SQLState and a message naming
 * the problem) or exactly one clear log line however long the problem lasts, and the application
 * keeps working where it can (reads fall back to the primary, writes go on). Runs on a sandbox that
 * requires SCRAM passwords, so wrong passwords are real.
 */
class BadInputIT {
  /** Long enough for ~15 lag probes at 100 ms: a problem logged per probe would show 15 lines. */
  static final Duration OBSERVE = Duration.ofMillis(1500);
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).requirePasswords().sql(
      "CREATE TABLE hb_text (id int PRIMARY KEY, beat_at text)",
      "INSERT INTO hb_text VALUES (1, 'yesterday')",
      "CREATE TABLE hb_nocol (id int PRIMARY KEY, ts timestamptz)",
      "INSERT INTO hb_nocol VALUES (1, now())",
      "CREATE TABLE hb_empty (id int PRIMARY KEY CHECK (id = 1), beat_at timestamptz NOT NULL)",
      "CREATE TABLE bad_writes (id bigserial PRIMARY KEY)").build();
  static PgCluster cluster;
  static int logMark;
  static final List<String> figures = new ArrayList<>();

  @BeforeAll
  static void up() {
    logMark = LogCapture.mark();
    cluster = SANDBOX.cluster();
  }

  @AfterAll
  static void down() throws Exception {
    String password = cluster == null ? null : cluster.password();
    SANDBOX.stop(); // first: the scan below covers what the shutdown logs
    new Figures("bad-input").put("cases", figures.size()).put("results", figures).report();
    SecretScan scan = new SecretScan(SecretScan.PASSWORD, password);
    scan.lines("BadInputIT log", LogCapture.since(logMark));
    scan.assertClean();
  }

  static String base(String app) {
    return SANDBOX.primaryUrl(app, null);
  }

  // ---------------------------------------------------------------- configuration: a clear SQLException

  record Bad(String what, String url, Properties info, String... mustName) { }

  @Test
  void badConfigurationIsAClearSqlExceptionAndStartsNothing() throws Exception {
    String p = cluster.primary().hostPort();
    String pw = "&user=postgres&password=" + SecretScan.PASSWORD;
    Properties negative = new Properties();
    negative.setProperty("fallbackPoolSize", "-3");
    negative.setProperty("password", SecretScan.PASSWORD);
    List<Bad> cases = List.of(
        new Bad("no database", "jdbc:omnium:postgresql://" + p + "/?applicationName=badcfg" + pw, null, "database"),
        new Bad("port out of range", "jdbc:omnium:postgresql://127.0.0.1:99999/omnium?applicationName=badcfg" + pw, null,
            "port"),
        new Bad("unclosed IPv6 bracket", "jdbc:omnium:postgresql://[::1/omnium?applicationName=badcfg" + pw, null, "]"),
        new Bad("user info in the URL", "jdbc:omnium:postgresql://postgres:" + SecretScan.PASSWORD + "@" + p
            + "/omnium?applicationName=badcfg", null, "user info"),
        new Bad("empty replica list", base("badcfg") + "&replica=", null, "replica"),
        new Bad("replica port not a number", base("badcfg") + "&replica=127.0.0.1:five", null, "replica", "port"),
        new Bad("duration with words", base("badcfg") + "&maxAge=5%20seconds", null, "maxAge", "250ms"),
        new Bad("duration not a number", base("badcfg") + "&heartbeatInterval=soon", null, "heartbeatInterval"),
        new Bad("negative duration", base("badcfg") + "&poolTimeout=-1s", null, "poolTimeout", "negative"),
        new Bad("duration under the pool floor", base("badcfg") + "&replicaAcquireTimeout=10ms", null,
            "replicaAcquireTimeout"),
        new Bad("zero duration", base("badcfg") + "&maxAge=0", null, "maxAge"),
        new Bad("negative size", base("badcfg") + "&fallbackPoolSize=-1", null, "fallbackPoolSize", "at least 1"),
        new Bad("zero size", base("badcfg") + "&replicaPoolSize=0", null, "replicaPoolSize", "at least 1"),
        new Bad("size not a number", base("badcfg") + "&primaryPoolSize=many", null, "primaryPoolSize"),
        new Bad("negative size in Properties", "jdbc:omnium:postgresql://" + p + "/omnium?applicationName=badcfg",
            negative, "fallbackPoolSize"),
        new Bad("key in the wrong case", base("badcfg") + "&maxage=5s", null, "maxage", "maxAge"),
        new Bad("unknown key", base("badcfg") + "&replicas=" + p, null, "replicas"),
        new Bad("not a boolean", base("badcfg") + "&heartbeatWriter=yes", null, "heartbeatWriter", "true or false"),
        new Bad("not a table name", base("badcfg") + "&heartbeatTable=hb;drop", null, "heartbeatTable"),
        new Bad("not a choice", base("badcfg") + "&readYourWrites=always", null, "readYourWrites"),
        new Bad("host as a parameter", base("badcfg") + "&PGHOST=elsewhere", null, "PGHOST"),
        new Bad("broken percent-encoding", base("badcfg") + "&maxAge=%zz", null, "percent"));
    SecretScan scan = new SecretScan(SecretScan.PASSWORD, cluster.password());
    List<String> problems = new ArrayList<>();
    for (Bad b : cases) {
      for (String mode : List.of("DriverManager", "OmniumDataSource")) {
        SQLException e;
        try {
          if (mode.equals("DriverManager")) {
            try (Connection c = b.info() == null ? DriverManager.getConnection(b.url())
                : DriverManager.getConnection(b.url(), b.info())) {
              problems.add(b.what() + " via " + mode + ": no error");
              continue;
            }
          } else {
            try (OmniumDataSource ds = new OmniumDataSource(b.url(), b.info()); Connection c = ds.getConnection()) {
              problems.add(b.what() + " via " + mode + ": no error");
              continue;
            }
          }
        } catch (SQLException x) {
          e = x;
        } catch (RuntimeException x) {
          problems.add(b.what() + " via " + mode + ": " + x + " instead of an SQLException");
          continue;
        }
        scan.exception(b.what(), e);
        String m = String.valueOf(e.getMessage());
        if (e.getSQLState() == null || !(e.getSQLState().equals("08001") || e.getSQLState().equals("HY000"))) {
          problems.add(b.what() + " via " + mode + ": SQLState " + e.getSQLState() + " (" + m + ")");
        }
        for (String name : b.mustName()) {
          if (!m.toLowerCase(Locale.ROOT).contains(name.toLowerCase(Locale.ROOT))) {
            problems.add(b.what() + " via " + mode + ": the message does not name '" + name + "': " + m);
          }
        }
        if (mode.equals("DriverManager")) figures.add(b.what() + "=" + e.getSQLState());
      }
    }
    scan.assertClean();
    assertTrue(problems.isEmpty(), problems.size() + " unclear errors:\n" + String.join("\n", problems));
    assertTrue(Leaks.threadsOf("badcfg").isEmpty(), "a rejected configuration started threads: " + Leaks.threadsOf("badcfg"));
    assertTrue(Leaks.mbeansOf("badcfg").isEmpty(), "a rejected configuration registered MBeans");
    // a foreign URL is not ours: null from the driver, a clear error from the data source
    assertEquals(null, new OmniumDriver().connect(cluster.primary().jdbcUrl(), new Properties()));
    SQLException foreign = assertThrows(SQLException.class, () -> {
      try (OmniumDataSource ds = new OmniumDataSource(cluster.primary().jdbcUrl()); Connection c = ds.getConnection()) {
        fail("a jdbc:postgresql: URL was accepted by the omnium data source");
      }
    });
    assertNotNull(foreign.getSQLState());
    assertTrue(foreign.getMessage().contains("omnium"), foreign.getMessage());
  }

  // ---------------------------------------------------------------- the primary: a clear error at first use

  static SQLException firstUse(String url) throws Exception {
    long begin = System.nanoTime();
    SQLException e = assertThrows(SQLException.class, () -> {
      try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
        st.execute("SELECT 1");
      }
    });
    long ms = (System.nanoTime() - begin) / 1_000_000;
    assertTrue(ms < 15_000, "the failure took " + ms + " ms");
    return e;
  }

  static String chain(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) b.append(t).append(" <- ");
    return b.toString();
  }

  @Test
  void unknownUnresolvableOrRefusingPrimaryAndWrongPasswordAreClearErrors() throws Exception {
    SecretScan scan = new SecretScan(SecretScan.PASSWORD, cluster.password());
    int closed = freePort();
    String badHost = "jdbc:omnium:postgresql://no-such-host.invalid:5432/omnium?applicationName=badhost"
        + "&connectTimeout=3&user=postgres&password=" + cluster.password();
    SQLException unresolvable = firstUse(badHost);
    scan.exception("unresolvable primary", unresolvable);
    assertEquals("08001", unresolvable.getSQLState(), chain(unresolvable));
    assertTrue(chain(unresolvable).contains("no-such-host.invalid"), "the error does not name the host: " + chain(unresolvable));

    SQLException refused = firstUse("jdbc:omnium:postgresql://127.0.0.1:" + closed + "/omnium?applicationName=badport"
        + "&connectTimeout=3&user=postgres&password=" + cluster.password());
    scan.exception("refusing primary", refused);
    assertEquals("08001", refused.getSQLState(), chain(refused));
    assertTrue(refused.getMessage().contains("127.0.0.1:" + closed), refused.getMessage());

    String wrong = "Wr0ng" + SecretScan.random(12);
    SQLException denied = firstUse(base("badpw").replace(cluster.password(), wrong));
    scan.exception("wrong password", denied);
    new SecretScan(wrong).exception("wrong password (the wrong one)", denied);
    assertEquals("28P01", denied.getSQLState(), chain(denied));
    assertTrue(denied.getMessage().contains("password authentication failed"), denied.getMessage());
    scan.assertClean();
    figures.add("unresolvablePrimary=" + unresolvable.getSQLState());
    figures.add("refusingPrimary=" + refused.getSQLState());
    figures.add("wrongPassword=" + denied.getSQLState());
    OmniumDriver.shutdown();
    for (String app : List.of("badhost", "badport", "badpw")) Leaks.assertGone(cluster, app);
  }

  @Test
  void wrongPasswordInDataSourceModeIsAClearErrorWithinPoolTimeout() throws Exception {
    String wrong = "Wr0ng" + SecretScan.random(12);
    String app = "badpwds";
    SecretScan scan = new SecretScan(SecretScan.PASSWORD, cluster.password(), wrong);
    long[] closeBegin = {0};
    List<String> problems = new ArrayList<>();
    SQLException example = null;
    try (OmniumDataSource db = new OmniumDataSource(base(app).replace(cluster.password(), wrong)
        + "&replica=" + cluster.replica(0).hostPort() + "&poolTimeout=1s&heartbeatInterval=100ms")) {
      for (String intent : List.of("write", "read")) {
        long begin = System.nanoTime();
        SQLException e = assertThrows(SQLException.class, () -> {
          try (Connection c = intent.equals("write") ? db.write() : db.read(); Statement st = c.createStatement()) {
            st.execute("SELECT 1");
          }
        });
        long ms = (System.nanoTime() - begin) / 1_000_000;
        scan.exception("wrong password, data source " + intent, e);
        figures.add("wrongPasswordDataSource" + intent + "=" + e.getSQLState() + " after " + ms + " ms: "
            + e.getClass().getSimpleName() + ": " + e.getMessage());
        assertEquals("28P01", e.getSQLState(), intent + ": " + chain(e));
        assertTrue(chain(e).contains("password authentication failed"), intent + ": " + chain(e));
        assertTrue(ms <= 1000 + 1500, intent + " failed after " + ms + " ms, poolTimeout 1000 ms + margin 1500 ms");
        // The message must not blame something else: no connection was ever in use.
        if (e.getMessage().contains("are in use")) {
          problems.add(intent + ": the message blames an exhausted pool although no connection could be opened"
              + " (wrong password): " + e.getMessage());
          example = e;
        }
      }
      closeBegin[0] = System.nanoTime(); // how long close() takes with pools that cannot connect (reported)
    }
    long closeMs = (System.nanoTime() - closeBegin[0]) / 1_000_000;
    figures.add("wrongPasswordDataSourceCloseMs=" + closeMs);
    scan.assertClean();
    OmniumDriver.shutdown();
    Leaks.assertGone(cluster, app);
    if (!problems.isEmpty()) throw new AssertionError(String.join("; ", problems), example);
  }

  // ---------------------------------------------------------------- replica-side problems: one line, reads fall back

  @Test
  void unresolvableReplicaHost() throws Exception {
    replicaProblem("rnohost", "replica=no-such-host.invalid:5432", "no-such-host.invalid:5432");
  }

  @Test
  void replicaPortWithNothingListening() throws Exception {
    int port = freePort();
    replicaProblem("rrefused", "replica=127.0.0.1:" + port, "127.0.0.1:" + port);
  }

  @Test
  void wrongReplicaPassword() throws Exception {
    String wrong = "Wr0ng" + SecretScan.random(12);
    int mark = LogCapture.mark();
    replicaProblem("rbadpw", "replica=" + cluster.replica(0).hostPort() + "&replicaPassword=" + wrong,
        "password authentication failed");
    SecretScan scan = new SecretScan(wrong);
    scan.lines("log", LogCapture.since(mark));
    scan.assertClean();
  }

  @Test
  void missingHeartbeatTable() throws Exception {
    replicaProblem("rnotable", "replica=" + cluster.replica(0).hostPort() + "&heartbeatTable=no_such_heartbeat",
        "no_such_heartbeat");
  }

  @Test
  void heartbeatColumnOfTheWrongType() throws Exception {
    replicaProblem("rtextcol", "replica=" + cluster.replica(0).hostPort() + "&heartbeatTable=hb_text", "hb_text");
  }

  @Test
  void heartbeatTableWithoutBeatAt() throws Exception {
    replicaProblem("rnocol", "replica=" + cluster.replica(0).hostPort() + "&heartbeatTable=hb_nocol", "hb_nocol");
  }

  @Test
  void heartbeatTableWithoutItsRow() throws Exception {
    replicaProblem("rnorow", "replica=" + cluster.replica(0).hostPort() + "&heartbeatTable=hb_empty", "hb_empty");
  }

  @Test
  void aReplicaThatIsReallyThePrimary() throws Exception {
    // Roles are discovered: a listed replica that is the primary is an expected role, one INFO line.
    replicaProblem("risprimary", "replica=" + cluster.primary().hostPort(), "is the primary now", " INFO ");
  }

  /**
   * Runs reads and writes for {@link #OBSERVE} with the problem in place: every read succeeds on the
   * fallback route (the primary), every write succeeds, and the captured log holds exactly one line
   * about it, at WARN or ERROR, naming {@code lineMustContain}.
   */
  private void replicaProblem(String app, String replicaParams, String lineMustContain) throws Exception {
    replicaProblem(app, replicaParams, lineMustContain, null);
  }

  /** @param level the one line's level, e.g. {@code " INFO "}; null: WARN or ERROR */
  private void replicaProblem(String app, String replicaParams, String lineMustContain, String level)
      throws Exception {
    int mark = LogCapture.mark();
    String url = base(app) + "&" + replicaParams + "&heartbeatInterval=100ms&maxAge=1s&replicaAcquireTimeout=500ms"
        + "&connectTimeout=2";
    int reads = 0;
    try (Connection c = DriverManager.getConnection(url); Connection w = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      // observed from the first read on: a cold JVM's first connect loads the driver's classes
      long deadline = System.nanoTime() + OBSERVE.toNanos();
      while (System.nanoTime() < deadline) {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
            "SELECT pg_is_in_recovery(), inet_server_port(), current_setting('application_name')")) {
          rs.next();
          assertFalse(rs.getBoolean(1), "a read ran on the replica despite the problem");
          assertEquals(cluster.primary().port(), rs.getInt(2));
          assertEquals(app + ":fallback", rs.getString(3), "reads fall back to the primary's fallback pool");
          reads++;
        }
        try (Statement st = w.createStatement()) {
          assertEquals(1, st.executeUpdate("INSERT INTO bad_writes DEFAULT VALUES"), "writes go on");
        }
        Thread.sleep(50);
      }
    }
    List<String> lines = LogCapture.since(mark, l -> l.contains(lineMustContain) && !l.startsWith("JUL FINE"));
    figures.add(app + "=" + lines.size() + " line(s)");
    assertTrue(reads >= 5, "only " + reads + " reads in " + OBSERVE);
    assertEquals(1, lines.size(), "expected exactly one log line naming '" + lineMustContain + "' in " + OBSERVE
        + " (~" + OBSERVE.toMillis() / 100 + " probes), got:\n" + String.join("\n", lines));
    String line = lines.get(0);
    if (level != null) {
      assertTrue(line.contains(level), "not at" + level + "level: " + line);
    } else {
      assertTrue(line.contains(" WARN ") || line.contains(" ERROR "), "not a warning or error: " + line);
    }
    assertTrue(line.contains("omnium"), "not the driver's line: " + line);
    Leaks.assertQuiescent(cluster, app);
    OmniumDriver.shutdown();
    Leaks.assertGone(cluster, app);
  }

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
