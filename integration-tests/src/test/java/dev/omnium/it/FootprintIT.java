package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 34: what one application process costs the servers, as the table counts it: one
 * HikariCP pool of at most 4 connections, 50 writes and 200 sequential read-only transactions, a
 * burst of 4 read-only transactions at once (the internal pools grow with demand), then idle;
 * only sessions the application's pool does not hold count (omnium's own, named
 * {@code <app>:<role>}). An idle process keeps at most 1 such session on the primary (2 with
 * {@code heartbeatWriter=true}) and 2 on the replica, sends about one small query per
 * {@code heartbeatInterval} to each server (counted in the servers' own statement logs), and its
 * first read after the idle period opens at most one session.
 */
class FootprintIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL)",
          "INSERT INTO items SELECT g, g * 7 FROM generate_series(1, 100) g",
          "CREATE TABLE writes (id bigserial PRIMARY KEY, v int NOT NULL)")
      .build();

  static final Duration INTERVAL = Duration.ofMillis(200);
  /**
   * How long internal pools keep a session nobody uses: HikariCP's floor, so that the idle state
   * comes within its 30 s housekeeping period plus this, not the default minute.
   */
  static final String POOL_IDLE_TIMEOUT = "10s";
  private static final Pattern LOGGED = Pattern.compile(
      "\\] (\\S+) LOG:  (?:statement|execute [^:]*):");

  @AfterEach
  void shutdownRouters() {
    OmniumDriver.shutdown();
  }

  @Test
  void anIdleFleetMemberKeepsOneSessionOnThePrimaryAndTwoOnTheReplica() throws Exception {
    footprint("member", "", 1, 2, 1);
  }

  @Test
  void anIdleHeartbeatWriterKeepsTwoSessionsOnThePrimaryAndTwoOnTheReplica() throws Exception {
    footprint("writer", "&heartbeatWriter=true", 2, 2, 2);
  }

  /**
   * A replica address may be a reader endpoint, so its watcher looks now and then for servers no
   * read has reached; it needs to only while reads found no fresh server behind the address. A
   * process that reads nothing makes no such login: over 140 heartbeat intervals (the looks' gap
   * grows to at most 64) the replica runs no {@code ServerKey} query of the watcher's (each look
   * is a login as {@code <app>:watcher} that asks which server it reached; the replica pool's
   * warm session, which HikariCP may open during the window, asks it too, as {@code :replica}).
   */
  @Test
  void anIdleProcessLooksForNoOtherServerBehindItsReplicaAddress() throws Exception {
    String app = "nolook";
    Duration interval = Duration.ofMillis(50);
    try (Connection c = DriverManager.getConnection(SANDBOX.url(app, "heartbeatInterval="
        + interval.toMillis() + "ms"))) {
      assertTrue(c.isValid(5), "the logical connection is open, its router started");
      Poll.until(Duration.ofSeconds(30), "the watcher's session on the replica",
          () -> own(SANDBOX.replica(), app).containsKey(app + ":watcher"));
      logStatements(true);
      Map<String, Integer> looks;
      try {
        long from = logged(SANDBOX.replica(), app);
        Poll.pause(140 * interval.toMillis());
        looks = logged(SANDBOX.replica(), from, Files.size(SANDBOX.replica().logFile()), app,
            "inet_server_addr()");
      } finally {
        logStatements(false);
      }
      System.out.printf("FIGURE footprint %s (PostgreSQL %s): looks behind the replica address"
          + " in 140 idle heartbeat intervals: %s%n", app, SANDBOX.cluster().version(), looks);
      assertEquals(0, looks.getOrDefault(app + ":watcher", 0), "looks through the replica"
          + " address by a process that reads nothing (each asks which server it reached): "
          + looks);
    }
  }

  /**
   * @param queriesPerInterval on the primary; the replica's is always one (its watcher)
   */
  private static void footprint(String app, String extra, int primaryMax, int replicaMax,
      int queriesPerInterval) throws Exception {
    PgCluster cluster = SANDBOX.cluster();
    HikariConfig hc = new HikariConfig();
    hc.setPoolName("footprint-" + app);
    hc.setJdbcUrl(SANDBOX.url(app, "heartbeatInterval=" + INTERVAL.toMillis() + "ms" + extra));
    hc.setMaximumPoolSize(4);
    Properties props = new Properties();
    props.setProperty("poolIdleTimeout", POOL_IDLE_TIMEOUT);
    hc.setDataSourceProperties(props);
    try (HikariDataSource pool = new HikariDataSource(hc)) {
      Poll.until(Duration.ofSeconds(30), "a read-only transaction on the replica",
          () -> readOnly(pool).inRecovery());
      for (int i = 0; i < 50; i++) {
        try (Connection c = pool.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO writes (v) VALUES (?)")) {
          ps.setInt(1, i);
          ps.executeUpdate();
        }
      }
      for (int i = 0; i < 200; i++) readOnly(pool);
      // Demand: four read-only transactions open at once hold four replica sessions.
      List<Connection> burst = new ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          Connection c = pool.getConnection();
          burst.add(c);
          c.setReadOnly(true);
          c.setAutoCommit(false);
          assertTrue(Where.of(c).inRecovery(), "a read-only transaction of the burst on the replica");
        }
        assertTrue(own(cluster.replica(0), app).values().stream().mapToInt(Integer::intValue).sum()
            >= 5, "the replica pool grew to the demand: " + own(cluster.replica(0), app));
      } finally {
        for (Connection c : burst) {
          c.commit();
          c.close();
        }
      }

      // Idle: the internal pools shrink back, within their idle timeout and HikariCP's 30 s
      // housekeeping period (with a margin for a loaded machine).
      Duration took;
      try {
        took = Poll.until(Duration.ofSeconds(90), "the idle footprint",
            () -> total(own(cluster.primary(), app)) <= primaryMax
                && total(own(cluster.replica(0), app)) <= replicaMax);
      } catch (AssertionError e) {
        throw new AssertionError("omnium's own sessions of an idle process: on the primary "
            + own(cluster.primary(), app) + " (at most " + primaryMax + "), on the replica "
            + own(cluster.replica(0), app) + " (at most " + replicaMax + ")", e);
      }
      // ... and stays there, while the background work goes on (15 heartbeat intervals), every
      // statement the servers run logged.
      Map<String, Integer> primary = own(cluster.primary(), app);
      Map<String, Integer> replica = own(cluster.replica(0), app);
      long primaryLog;
      long replicaLog;
      long primaryEnd;
      long replicaEnd;
      double intervals;
      logStatements(true);
      try {
        primaryLog = logged(cluster.primary(), app);
        replicaLog = logged(cluster.replica(0), app);
        long windowStart = System.nanoTime();
        long windowEnd = windowStart + 15 * INTERVAL.toNanos();
        while (System.nanoTime() < windowEnd) {
          Poll.pause(INTERVAL.toMillis()); // paces the samples
          primary = own(cluster.primary(), app);
          replica = own(cluster.replica(0), app);
          assertTrue(total(primary) <= primaryMax, "omnium's own sessions on the primary, idle: "
              + primary);
          assertTrue(total(replica) <= replicaMax, "omnium's own sessions on the replica, idle: "
              + replica);
        }
        intervals = (System.nanoTime() - windowStart) / (double) INTERVAL.toNanos();
        primaryEnd = Files.size(cluster.primary().logFile());
        replicaEnd = Files.size(cluster.replica(0).logFile());
      } finally {
        logStatements(false);
      }
      Map<String, Integer> primaryQueries = logged(cluster.primary(), primaryLog, primaryEnd, app);
      Map<String, Integer> replicaQueries = logged(cluster.replica(0), replicaLog, replicaEnd, app);
      System.out.printf("FIGURE footprint %s (PostgreSQL %s): idle after %d ms; own sessions"
              + " primary %s, replica %s; statements in %.1f heartbeat intervals: primary %s,"
              + " replica %s%n", app, cluster.version(), took.toMillis(), primary, replica,
          intervals, primaryQueries, replicaQueries);
      // about one small query per heartbeatInterval per server (the writer's own on the primary)
      assertTrue(total(primaryQueries) <= queriesPerInterval * (intervals + 2),
          "statements of omnium's own on the primary: " + primaryQueries);
      assertTrue(total(replicaQueries) <= intervals + 2,
          "statements of omnium's own on the replica: " + replicaQueries);
      assertTrue(total(replicaQueries) >= intervals / 2, "the watcher still probes the replica: "
          + replicaQueries);

      // The first read after the idle period opens at most one session.
      double primaryMark = now(cluster.primary());
      double replicaMark = now(cluster.replica(0));
      long t0 = System.nanoTime();
      Where first = readOnly(pool);
      long micros = (System.nanoTime() - t0) / 1000;
      int connects = opened(cluster.primary(), app, primaryMark)
          + opened(cluster.replica(0), app, replicaMark);
      System.out.printf("FIGURE footprint %s (PostgreSQL %s): first read after idle on %s,"
          + " %d µs, %d session(s) opened%n", app, cluster.version(),
          first.inRecovery() ? "the replica" : "the primary", micros, connects);
      assertTrue(first.inRecovery(), "the first read after the idle period ran on the replica");
      assertTrue(connects <= 1, "sessions opened by the first read after the idle period: "
          + connects);
    }
  }

  private static Where readOnly(HikariDataSource pool) throws SQLException {
    try (Connection c = pool.getConnection()) {
      return readOnlyTransaction(c);
    }
  }

  /** One read-only transaction on {@code c} (left read-only, auto-commit off): where it ran. */
  static Where readOnlyTransaction(Connection c) throws SQLException {
    c.setReadOnly(true);
    c.setAutoCommit(false);
    Where w = Where.of(c);
    try (PreparedStatement ps = c.prepareStatement("SELECT v FROM items WHERE id = ?")) {
      ps.setInt(1, 42);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(294, rs.getInt(1));
      }
    }
    c.commit();
    return w;
  }

  /**
   * Turns {@code log_statement=all} on or off on both servers. A session takes the setting when
   * it next finishes a command, so the window starts once the log shows one of them.
   */
  private static void logStatements(boolean on) throws SQLException {
    for (PgNode node : List.of(SANDBOX.primary(), SANDBOX.replica())) {
      try (Connection c = SANDBOX.cluster().connect(node); Statement st = c.createStatement()) {
        st.execute(on ? "ALTER SYSTEM SET log_statement = 'all'" : "ALTER SYSTEM RESET log_statement");
        st.execute("SELECT pg_reload_conf()");
      }
    }
  }

  /** The log's length once it shows a statement of omnium's own session of {@code app}. */
  private static long logged(PgNode node, String app) throws Exception {
    long start = Files.size(node.logFile());
    long[] at = {start};
    Poll.until(Duration.ofSeconds(10), "a statement of " + app + " in the log of " + node,
        () -> {
          at[0] = Files.size(node.logFile());
          return !logged(node, start, at[0], app).isEmpty();
        });
    return at[0];
  }

  /** omnium's own sessions of {@code app} on a server, by application_name. */
  static Map<String, Integer> own(PgNode node, String app) throws SQLException {
    Map<String, Integer> m = new TreeMap<>();
    try (Connection c = SANDBOX.cluster().connect(node);
         PreparedStatement ps = c.prepareStatement("SELECT application_name, count(*)"
             + " FROM pg_stat_activity WHERE application_name LIKE ? GROUP BY 1")) {
      ps.setString(1, app + ":%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) m.put(rs.getString(1), rs.getInt(2));
      }
    }
    return m;
  }

  static int total(Map<String, Integer> m) {
    return m.values().stream().mapToInt(Integer::intValue).sum();
  }

  /**
   * Statements the server logged between two offsets of its log from omnium's own sessions of
   * {@code app}, by application_name.
   */
  static Map<String, Integer> logged(PgNode node, long offset, long end, String app)
      throws IOException {
    return logged(node, offset, end, app, "");
  }

  /** Like {@link #logged(PgNode, long, long, String)}, statements containing {@code text}. */
  static Map<String, Integer> logged(PgNode node, long offset, long end, String app, String text)
      throws IOException {
    byte[] bytes;
    try (RandomAccessFile f = new RandomAccessFile(node.logFile().toFile(), "r")) {
      bytes = new byte[(int) Math.max(0, Math.min(end, f.length()) - offset)];
      f.seek(offset);
      f.readFully(bytes);
    }
    Map<String, Integer> m = new TreeMap<>();
    for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
      Matcher mt = LOGGED.matcher(line);
      if (mt.find() && mt.group(1).startsWith(app + ":") && line.contains(text)) {
        m.merge(mt.group(1), 1, Integer::sum);
      }
    }
    return m;
  }

  private static double now(PgNode node) throws SQLException {
    return Double.parseDouble(SANDBOX.queryOne(node,
        "SELECT extract(epoch FROM clock_timestamp())::float8"));
  }

  /** Sessions of {@code app} (any route) that started after {@code since} (server time). */
  private static int opened(PgNode node, String app, double since) throws SQLException {
    return Integer.parseInt(SANDBOX.queryOne(node, "SELECT count(*) FROM pg_stat_activity"
        + " WHERE (application_name = ? OR application_name LIKE ?)"
        + " AND extract(epoch FROM backend_start) > ?", app, app + ":%", since));
  }
}
