package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.net.ServerSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Suite 7, secrets: with distinctive passwords (the sandbox's random SCRAM password, a password full
 * of URL metacharacters for a second role, and wrong ones) and every log line captured, no password
 * appears in any log line, exception (message, causes, suppressed, stack), JMX attribute of any
 * dev.omnium or com.zaxxer.hikari MBean, thread name, or toString() of data sources, connections,
 * statements, result sets and metadata, across normal use, wrong passwords, an unreachable and a
 * restarted replica, exhausted pools and bad URLs that carry the password.
 */
class SecretsIT {
  /** A password with every character a URL parser could trip over. */
  static final String SPECIAL = "Sp3c:@/?#&=+%;" + SecretScan.random(10);
  static final String WRONG = "Wr0ngPw" + SecretScan.random(14);
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).requirePasswords()
      .heartbeatTableOnly().build();
  static PgCluster cluster;
  static int logMark;
  static final AtomicInteger scanned = new AtomicInteger();
  static int jmxAttributes;

  @BeforeAll
  static void up() throws Exception {
    logMark = LogCapture.mark();
    cluster = SANDBOX.cluster();
    SANDBOX.execOnPrimary("CREATE ROLE app LOGIN PASSWORD '" + SPECIAL.replace("'", "''") + "'",
        "CREATE TABLE notes (id bigserial PRIMARY KEY, body text)",
        "GRANT ALL ON notes, notes_id_seq TO app",
        "GRANT SELECT ON replica_heartbeat TO app");
    SANDBOX.awaitCaughtUp();
  }

  static SecretScan scan() {
    return new SecretScan(cluster.password(), SPECIAL, encode(SPECIAL), WRONG, SecretScan.PASSWORD);
  }

  static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  @AfterAll
  static void down() throws Exception {
    SANDBOX.stop(); // first: the scan below covers what the shutdown logs
    List<String> lines = LogCapture.since(logMark);
    SecretScan logs = scan();
    logs.lines("SecretsIT log", lines);
    new Figures("secrets").put("logLines", lines.size()).put("textsScanned", scanned.get() + logs.scanned())
        .put("jmxAttributes", jmxAttributes).put("leaks", 0).report();
    logs.assertClean();
  }

  static String url(String app, String extra) {
    return SANDBOX.url(app, "maxAge=1s&heartbeatInterval=100ms" + (extra == null ? "" : "&" + extra));
  }

  /** Every object an application can print: the connection, its statements, result sets, metadata. */
  static void printables(SecretScan s, String where, Connection c) throws SQLException {
    s.toStringOf(where + " connection", c);
    try (Statement st = c.createStatement()) {
      s.toStringOf(where + " statement", st);
      try (ResultSet rs = st.executeQuery("SELECT current_user, pg_is_in_recovery()")) {
        s.toStringOf(where + " result set", rs);
        rs.next();
        s.toStringOf(where + " statement of result set", rs.getStatement());
      }
      s.toStringOf(where + " connection of statement", st.getConnection());
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT ?::text")) {
      ps.setString(1, "x");
      s.toStringOf(where + " prepared statement", ps);
      try (ResultSet rs = ps.executeQuery()) {
        s.toStringOf(where + " prepared result set", rs);
      }
    }
    DatabaseMetaData md = c.getMetaData();
    s.toStringOf(where + " metadata", md);
    s.text(where + " metadata URL", md.getURL());
    s.text(where + " metadata user", md.getUserName());
    s.toStringOf(where + " client info", c.getClientInfo());
    s.toStringOf(where + " warnings", c.getWarnings());
  }

  @Test
  void normalUseInDriverAndDataSourceMode() throws Exception {
    SecretScan s = scan();
    String app = "secretnormal";
    // Driver mode, password in the URL, the heartbeat writer on.
    String url = url(app, "heartbeatWriter=true");
    try (Connection w = DriverManager.getConnection(url); Connection r = DriverManager.getConnection(url)) {
      try (Statement st = w.createStatement()) {
        st.executeUpdate("INSERT INTO notes (body) VALUES ('hello')");
      }
      r.setReadOnly(true);
      Poll.until(Duration.ofSeconds(15), "a replica read", () -> {
        try (Statement st = r.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
          rs.next();
          return rs.getBoolean(1);
        }
      });
      printables(s, "driver mode write", w);
      printables(s, "driver mode read", r);
      r.setAutoCommit(false);
      printables(s, "driver mode read-only transaction", r);
      r.commit();
      SQLException ro = assertThrows(SQLException.class, () -> {
        try (Statement st = r.createStatement()) {
          st.executeUpdate("INSERT INTO notes (body) VALUES ('no')");
        }
      });
      s.exception("25006", ro);
      r.rollback();
      SQLException syntax = assertThrows(SQLException.class, () -> {
        try (Statement st = w.createStatement()) {
          st.execute("SELEC oops");
        }
      });
      s.exception("syntax error", syntax);
      jmxAttributes = Math.max(jmxAttributes, s.jmx());
    }
    // DataSource mode, the second role's password (URL metacharacters) given through setPassword.
    String dsApp = "secretds";
    try (OmniumDataSource db = new OmniumDataSource("jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?replica=" + cluster.replica(0).hostPort() + "&applicationName=" + dsApp
        + "&maxAge=5s&heartbeatInterval=100ms")) {
      db.setUser("app");
      db.setPassword(SPECIAL);
      s.toStringOf("data source before start", db);
      try (OmniumConnection c = db.write()) {
        printables(s, "data source write", c);
      }
      try (OmniumConnection c = db.read()) {
        printables(s, "data source read", c);
      }
      assertEquals("app", db.readWithRetry(c -> {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_user")) {
          rs.next();
          return rs.getString(1);
        }
      }));
      s.toStringOf("data source", db);
      s.text("data source URL", db.getUrl());
      s.toStringOf("metrics", db.metrics());
      s.toStringOf("replica states", db.metrics().getReplicaStates());
      jmxAttributes = Math.max(jmxAttributes, s.jmx());
    }
    // The same password URL-encoded in a URL.
    String encodedApp = "secretenc";
    try (Connection c = DriverManager.getConnection("jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?replica=" + cluster.replica(0).hostPort() + "&applicationName=" + encodedApp
        + "&user=app&password=" + encode(SPECIAL))) {
      printables(s, "encoded password", c);
      s.jmx();
    }
    threads(s);
    scanned.addAndGet(s.scanned());
    s.assertClean();
    for (String a : List.of(app, dsApp, encodedApp)) {
      Leaks.assertQuiescent(cluster, a);
    }
    OmniumDriver.shutdown();
    for (String a : List.of(app, dsApp, encodedApp)) Leaks.assertGone(cluster, a);
  }

  @Test
  void wrongPasswords() throws Exception {
    SecretScan s = scan();
    // Primary: the error reaches the caller.
    String bad = url("secretwrong", null).replace(cluster.password(), WRONG);
    SQLException e = assertThrows(SQLException.class, () -> {
      try (Connection c = DriverManager.getConnection(bad); Statement st = c.createStatement()) {
        st.execute("SELECT 1");
      }
    });
    assertEquals("28P01", e.getSQLState());
    s.exception("wrong primary password", e);
    // Same through Properties, and through a data source.
    Properties info = new Properties();
    info.setProperty("user", cluster.user());
    info.setProperty("password", WRONG);
    SQLException viaProps = assertThrows(SQLException.class, () -> {
      try (Connection c = DriverManager.getConnection("jdbc:omnium:postgresql://" + cluster.primary().hostPort()
          + "/omnium?applicationName=secretwrong2", info); Statement st = c.createStatement()) {
        st.execute("SELECT 1");
      }
    });
    s.exception("wrong password in Properties", viaProps);
    try (OmniumDataSource db = new OmniumDataSource(bad.replace("secretwrong", "secretwrong3") + "&poolTimeout=1s")) {
      SQLException viaDs = assertThrows(SQLException.class, () -> {
        try (Connection c = db.write(); Statement st = c.createStatement()) {
          st.execute("SELECT 1");
        }
      });
      s.exception("wrong password, data source", viaDs);
      s.toStringOf("data source with a wrong password", db);
      SQLException read = assertThrows(SQLException.class, () -> {
        try (Connection c = db.read(); Statement st = c.createStatement()) {
          st.execute("SELECT 1");
        }
      });
      s.exception("wrong password, read on the fallback", read);
      s.jmx();
    }
    // Replica: a log line, reads fall back.
    try (Connection c = DriverManager.getConnection(url("secretwrongreplica", "replicaPassword=" + WRONG))) {
      c.setReadOnly(true);
      Thread.sleep(1000);
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
        rs.next();
        assertFalse(rs.getBoolean(1));
      }
      printables(s, "wrong replica password", c);
      s.jmx();
    }
    threads(s);
    scanned.addAndGet(s.scanned());
    s.assertClean();
    OmniumDriver.shutdown();
    for (String a : List.of("secretwrong", "secretwrong2", "secretwrong3", "secretwrongreplica")) {
      Leaks.assertGone(cluster, a);
    }
  }

  @Test
  void unreachableAndRestartedReplicaAndExhaustedPools() throws Exception {
    SecretScan s = scan();
    int closed;
    try (ServerSocket socket = new ServerSocket(0)) {
      closed = socket.getLocalPort();
    }
    String app = "secretunreach";
    String unreachable = SANDBOX.primaryUrl(app, null) + "&replica=127.0.0.1:" + closed
        + "&heartbeatInterval=100ms&fallbackPoolSize=1&poolTimeout=250ms";
    try (Connection a = DriverManager.getConnection(unreachable); Connection b = DriverManager.getConnection(unreachable)) {
      a.setReadOnly(true);
      b.setReadOnly(true);
      a.setAutoCommit(false);
      // holds the only fallback connection until commit; the pool opens it while the router
      // starts, which a poolTimeout of 250 ms may not wait for on a loaded machine
      Poll.until(Duration.ofSeconds(10), "the fallback pool's one session", () -> {
        try (Statement st = a.createStatement()) {
          return st.execute("SELECT 1");
        }
      });
      SQLException exhausted = assertThrows(SQLException.class, () -> {
        try (Statement st = b.createStatement()) {
          st.execute("SELECT 1");
        }
      });
      s.exception("fallback pool exhausted", exhausted);
      assertTrue(exhausted.getMessage().contains("fallbackPoolSize"), exhausted.getMessage());
      a.commit();
      printables(s, "unreachable replica", b);
      s.jmx();
    }
    String restartApp = "secretrestart";
    String url = url(restartApp, "heartbeatWriter=true");
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      CompletableFuture<Void> faults = CompletableFuture.runAsync(() -> {
        cluster.stop(cluster.replica(0), true);
        Poll.pause(1500);
        cluster.start(cluster.replica(0));
      });
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      List<SQLException> errors = new ArrayList<>();
      while (System.nanoTime() < end || !faults.isDone()) {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
          rs.next();
        } catch (SQLException e) {
          errors.add(e);
        }
        Thread.sleep(20);
      }
      faults.get(60, TimeUnit.SECONDS);
      for (SQLException e : errors) s.exception("read during a replica restart", e);
      printables(s, "after a replica restart", c);
      s.jmx();
    }
    threads(s);
    scanned.addAndGet(s.scanned());
    s.assertClean();
    Leaks.assertQuiescent(cluster, app);
    Leaks.assertQuiescent(cluster, restartApp);
    OmniumDriver.shutdown();
    Leaks.assertGone(cluster, app);
    Leaks.assertGone(cluster, restartApp);
  }

  @Test
  void badUrlsCarryingThePassword() throws Exception {
    SecretScan s = scan();
    String host = cluster.primary().hostPort();
    List<String> urls = List.of(
        "jdbc:omnium:postgresql://" + host + "/omnium?password=" + WRONG + "&maxAge=soon",
        "jdbc:omnium:postgresql://" + host + "/omnium?password=" + encode(SPECIAL) + "&fallbackPoolSize=-1",
        "jdbc:omnium:postgresql://" + host + "/omnium?replicaPassword=" + WRONG + "&Password=" + WRONG + "&maxage=1s",
        "jdbc:omnium:postgresql://postgres:" + WRONG + "@" + host + "/omnium",
        "jdbc:omnium:postgresql://postgres:" + encode(SPECIAL) + "@" + host + "/omnium?maxAge=1s",
        "jdbc:omnium:postgresql://" + host + "/?password=" + WRONG,
        "jdbc:omnium:postgresql://" + host + ":99999/omnium?password=" + WRONG,
        "jdbc:omnium:postgresql://" + host + "/omnium?password=" + WRONG + "&maxAge=%zz",
        "jdbc:omnium:postgresql://" + host + "/omnium?password=%zz" + WRONG,
        "jdbc:omnium:postgresql://" + host + "/omnium?pass%77ord=" + WRONG + "&PGHOST=x",
        "jdbc:omnium:postgresql://" + host + "/omnium?sslpassword=" + WRONG + "&replica=");
    int errors = 0;
    for (String u : urls) {
      for (int mode = 0; mode < 2; mode++) {
        try {
          if (mode == 0) {
            DriverManager.getConnection(u).close();
          } else {
            try (OmniumDataSource ds = new OmniumDataSource(u)) {
              s.toStringOf("data source with a bad URL", ds);
              s.text("data source URL", ds.getUrl());
              ds.getConnection().close();
            }
          }
        } catch (SQLException e) {
          errors++;
          s.exception("bad URL", e);
        }
      }
    }
    assertEquals(urls.size() * 2, errors, "every bad URL must be refused");
    s.jmx();
    scanned.addAndGet(s.scanned());
    s.assertClean();
  }

  static void threads(SecretScan s) {
    for (Thread t : Thread.getAllStackTraces().keySet()) s.text("thread name", t.getName());
  }
}
