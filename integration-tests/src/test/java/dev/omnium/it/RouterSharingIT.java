package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Sessions;
import dev.omnium.sandbox.testkit.Where;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 items 1 and 8: routers follow credentials instead of multiplying, idle routers close
 * themselves, fallbackPoolSize is a cap per process for one primary database and user, and
 * closing with nothing in use is fast. Counted on the servers (pg_stat_activity), in threads and in
 * MBeans.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
class RouterSharingIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).requirePasswords().build();
  static PgCluster cluster;

  @BeforeAll
  static void up() throws SQLException {
    cluster = SANDBOX.cluster();
    SANDBOX.execOnPrimary("CREATE ROLE app LOGIN PASSWORD 'pw-1'",
        "GRANT SELECT ON replica_heartbeat TO app");
    SANDBOX.awaitCaughtUp();
  }

  @AfterEach
  void shutdownRouters() {
    OmniumDriver.shutdown();
  }

  static String url(String app, String extra) {
    return "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?replica=" + cluster.replica(0).hostPort() + "&applicationName=" + app
        + "&heartbeatInterval=200ms&maxAge=2s&user=app" + (extra == null ? "" : "&" + extra);
  }

  static void setPassword(String password) throws SQLException {
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute("ALTER ROLE app PASSWORD '" + password + "'");
    }
    cluster.awaitCaughtUp(cluster.replica(0));
  }

  static Connection connect(String url, String password) throws SQLException {
    Properties p = new Properties();
    p.setProperty("password", password);
    return DriverManager.getConnection(url, p);
  }

  static int threads(String prefix) {
    int n = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive() && t.getName().startsWith(prefix)) n++;
    }
    return n;
  }

  static int routerBeans(String app) throws Exception {
    Set<ObjectName> names = ManagementFactory.getPlatformMBeanServer()
        .queryNames(new ObjectName("dev.omnium:type=Router,*"), null);
    int n = 0;
    for (ObjectName name : names) {
      String value = ObjectName.unquote(quoted(name.getKeyProperty("name")));
      if (value.equals(app) || value.startsWith(app + "-")) n++;
    }
    return n;
  }

  private static String quoted(String v) {
    return v.startsWith("\"") ? v : "\"" + v + "\"";
  }

  static int poolBeans(String app) throws Exception {
    int n = 0;
    for (ObjectName name : ManagementFactory.getPlatformMBeanServer()
        .queryNames(new ObjectName("com.zaxxer.hikari:*"), null)) {
      if (name.toString().contains("(" + app + "-") && !name.toString().contains("PoolConfig")) n++;
    }
    return n;
  }

  /** Sessions of {@code app} (any route) on a server, as the server reports them. */
  static int sessions(PgNode node, String applicationName) throws SQLException {
    return Sessions.count(cluster, node, applicationName);
  }

  static Where readOnReplica(Connection c) throws SQLException {
    c.setReadOnly(true);
    try {
      return Where.of(c);
    } finally {
      c.setReadOnly(false);
    }
  }

  @Test
  void rotatedCredentialsShareOneRouterAndNewSessionsUseTheLatest() throws Exception {
    String app = "rot";
    String url = url(app, "fallbackPoolSize=2");
    setPassword("pw-1");
    try (Connection c = connect(url, "pw-1")) {
      Poll.until(Duration.ofSeconds(20), "a read on the replica",
          () -> readOnReplica(c).inRecovery());
    }
    for (String pw : List.of("pw-2", "pw-3")) {
      setPassword(pw);
      try (Connection c = connect(url, pw)) {
        Where w = Where.of(c); // a new primary session: it can only log in with the new password
        assertFalse(w.inRecovery());
        assertEquals(app, w.applicationName());
        Poll.until(Duration.ofSeconds(20), "a read on the replica after rotating to " + pw,
            () -> readOnReplica(c).inRecovery());
      }
    }
    // One router: one lag watcher (thread and session), one router MBean, one set of pools.
    assertEquals(1, threads("omnium-lag-" + app + "-"), "lag watcher threads");
    assertEquals(1, sessions(cluster.replica(0), app + ":watcher"), "lag watcher sessions");
    assertEquals(1, routerBeans(app), "router MBeans");
    assertEquals(2, poolBeans(app), "pool MBeans (one replica pool, one fallback pool)");

    // Every route's old sessions die: the new ones must log in with the latest password.
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'");
    }
    try (Connection c = cluster.connect(cluster.replica(0)); Statement st = c.createStatement()) {
      st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'");
    }
    Poll.until(Duration.ofSeconds(20), "the lag watcher to log in again with the latest password",
        () -> sessions(cluster.replica(0), app + ":watcher") == 1);
    try (Connection c = connect(url, "pw-3")) {
      Poll.until(Duration.ofSeconds(20), "a replica session opened with the latest password",
          () -> readOnReplica(c).inRecovery());
      try (Connection check = cluster.connect(cluster.replica(0));
           PreparedStatement ps = check.prepareStatement("SELECT count(*) FROM pg_stat_activity"
               + " WHERE usename = 'app' AND application_name = ?")) {
        ps.setString(1, app + ":replica");
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertTrue(rs.getInt(1) >= 1, "replica sessions of the rotated user");
        }
      }
    }
    assertEquals(1, routerBeans(app), "still one router");
  }

  @Test
  void anAuthenticationPluginKeepsWorkingAcrossRotations() throws Exception {
    String app = "plugin";
    String url = url(app,
        "authenticationPluginClassName=" + RotatingPasswordPlugin.class.getName());
    for (String pw : List.of("pw-a", "pw-b")) {
      setPassword(pw);
      RotatingPasswordPlugin.current = pw;
      for (PgNode node : List.of(cluster.primary(), cluster.replica(0))) {
        try (Connection c = cluster.connect(node); Statement st = c.createStatement()) {
          st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
              + " WHERE usename = 'app'");
        }
      }
      try (Connection c = DriverManager.getConnection(url)) {
        assertEquals(app, Where.of(c).applicationName());
        Poll.until(Duration.ofSeconds(20), "a replica read through the plugin's password " + pw,
            () -> readOnReplica(c).inRecovery());
      }
      assertEquals(1, routerBeans(app), "one router");
      // the watcher reconnects on its next beat; an earlier measurement may keep reads fresh
      Poll.until(Duration.ofSeconds(20), "one lag watcher session",
          () -> sessions(cluster.replica(0), app + ":watcher") == 1);
      assertEquals(1, routerBeans(app), "still one router");
    }
  }

  @Test
  void aDifferentMaxAgeSharesTheRouterAndKeepsItsOwnBound() throws Exception {
    String app = "ages";
    setPassword("pw-1");
    try (Connection strict = connect(url(app, "maxAge=1s"), "pw-1");
         Connection lenient = connect(url(app, "maxAge=60s"), "pw-1")) {
      Poll.until(Duration.ofSeconds(20), "reads on the replica",
          () -> readOnReplica(strict).inRecovery() && readOnReplica(lenient).inRecovery());
      assertEquals(1, routerBeans(app), "one router for both maxAge values");
      assertEquals(1, sessions(cluster.replica(0), app + ":watcher"), "one lag watcher");
      cluster.pauseReplay(cluster.replica(0));
      try {
        Poll.until(Duration.ofSeconds(20), "the maxAge=1s connection to read on the primary",
            () -> !readOnReplica(strict).inRecovery());
        assertTrue(readOnReplica(lenient).inRecovery(), "maxAge=60s still reads on the replica");
      } finally {
        cluster.resumeReplay(cluster.replica(0));
      }
    }
  }

  @Test
  void anUnusedRouterClosesItself() throws Exception {
    String app = "idle";
    setPassword("pw-1");
    try (Connection c = connect(url(app, "routerIdleTimeout=1s&fallbackPoolSize=1"), "pw-1")) {
      Poll.until(Duration.ofSeconds(20), "a read on the replica",
          () -> readOnReplica(c).inRecovery());
      Thread.sleep(1_500); // longer than routerIdleTimeout: an open connection keeps its router
      assertTrue(readOnReplica(c).inRecovery(), "the router of an open connection stays");
      assertEquals(1, routerBeans(app));
    }
    Poll.until(Duration.ofSeconds(20), "the idle router to close itself", () ->
        routerBeans(app) == 0
        && poolBeans(app) == 0 && threads("omnium-lag-" + app + "-") == 0
        && threads("omnium-router-reaper") == 0
        && Sessions.countLike(cluster, cluster.replica(0), app) == 0
        && Sessions.countLike(cluster, cluster.primary(), app) == 0);
    // and a new connection simply starts a new one
    try (Connection c = connect(url(app, "routerIdleTimeout=1s"), "pw-1")) {
      assertFalse(Where.of(c).inRecovery());
      assertEquals(1, routerBeans(app));
    }
  }

  @Test
  void fallbackPoolSizeIsOneCapForThePrimaryDatabaseAndUser() throws Exception {
    setPassword("pw-1");
    // Two configurations (different application names, so two routers), no replica: every read
    // takes the fallback route.
    String base = "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?user=app&fallbackPoolSize=2&poolTimeout=500ms&applicationName=";
    List<Connection> held = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        Connection c = connect(base + "capa", "pw-1");
        held.add(c);
        c.setReadOnly(true);
        c.setAutoCommit(false);
        assertFalse(Where.of(c).inRecovery()); // holds a fallback session until commit
      }
      assertEquals(2, sessions(cluster.primary(), "capa:fallback"));
      try (Connection other = connect(base + "capb", "pw-1")) {
        other.setReadOnly(true);
        SQLException e = assertThrows(SQLException.class, () -> Where.of(other));
        assertTrue(e.getMessage().contains("fallbackPoolSize"), e.getMessage());
        assertTrue(e.getSQLState().startsWith("08"), e.getSQLState());
        held.get(0).commit();
        Where w = Where.of(other);
        assertEquals("capb:fallback", w.applicationName());
      }
    } finally {
      for (Connection c : held) c.close();
    }
  }

  @Test
  void closingWithNothingInUseTakesWellUnderASecond() throws Exception {
    setPassword("pw-1");
    String url = url("fastclose", "heartbeatWriter=false");
    try (Connection c = connect(url, "pw-1")) {
      Poll.until(Duration.ofSeconds(20), "a read on the replica",
          () -> readOnReplica(c).inRecovery());
      c.setReadOnly(true);
      c.setAutoCommit(true);
      Where.of(c); // and one read on each route's pool, so every pool has sessions to close
    }
    long start = System.nanoTime();
    OmniumDriver.shutdown();
    long driverMillis = (System.nanoTime() - start) / 1_000_000;

    Properties p = new Properties();
    p.setProperty("password", "pw-1");
    OmniumDataSource ds = new OmniumDataSource(url("fastclose-ds", "primaryPoolSize=2"), p);
    try (Connection c = ds.getConnection()) {
      Poll.until(Duration.ofSeconds(20), "a read on the replica",
          () -> readOnReplica(c).inRecovery());
    }
    start = System.nanoTime();
    ds.close();
    long dataSourceMillis = (System.nanoTime() - start) / 1_000_000;
    System.out.println("FIGURE close: OmniumDriver.shutdown() " + driverMillis
        + " ms, OmniumDataSource.close() " + dataSourceMillis + " ms");
    assertTrue(driverMillis < 1000, "OmniumDriver.shutdown() took " + driverMillis + " ms");
    assertTrue(dataSourceMillis < 1000,
        "OmniumDataSource.close() took " + dataSourceMillis + " ms");
    Poll.until(Duration.ofSeconds(10), "no session left", () ->
        Sessions.countLike(cluster, cluster.primary(), "fastclose") == 0
            && Sessions.countLike(cluster, cluster.replica(0), "fastclose") == 0);
  }

  @Test
  void closingWithAFrozenReplicaTakesWellUnderASecond() throws Exception {
    setPassword("pw-1");
    Properties p = new Properties();
    p.setProperty("password", "pw-1");
    OmniumDataSource ds = new OmniumDataSource(
        url("frozenclose", "primaryPoolSize=2&replicaPoolSize=4"), p);
    boolean frozen = false;
    try {
      try (Connection c = ds.getConnection()) {
        Poll.until(Duration.ofSeconds(20), "a read on the replica",
          () -> readOnReplica(c).inRecovery());
      }
      cluster.freeze(cluster.replica(0));
      frozen = true;
      // The watcher's probe now hangs on the frozen server, the pool's connects too.
      Poll.until(Duration.ofSeconds(20), "the watcher to notice", () ->
          !"OK".equals(ds.metrics().getReplicaStates().get(cluster.replica(0).hostPort())));
      Thread.sleep(300); // past the watcher's next interval: it connects to the frozen server
      long start = System.nanoTime();
      ds.close();
      long millis = (System.nanoTime() - start) / 1_000_000;
      System.out.println("FIGURE close with a frozen replica: OmniumDataSource.close() "
          + millis + " ms");
      assertTrue(millis < 1000,
          "OmniumDataSource.close() with a frozen replica took " + millis + " ms");
    } finally {
      ds.close();
      if (frozen) cluster.thaw(cluster.replica(0));
    }
    Poll.until(Duration.ofSeconds(20), "no session or thread left", () ->
        Sessions.countLike(cluster, cluster.primary(), "frozenclose") == 0
            && Sessions.countLike(cluster, cluster.replica(0), "frozenclose") == 0
            && threads("omnium-lag-frozenclose") == 0);
  }
}
