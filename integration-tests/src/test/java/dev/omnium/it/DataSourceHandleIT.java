package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import javax.sql.PooledConnection;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGConnectionPoolDataSource;

/**
 * DataSource mode lends a closed connection's state to the next {@code getConnection()}: the
 * closed connection keeps failing as a closed pgjdbc connection does (08003), and nothing it is
 * asked reaches the sessions of the connection that holds the state now. Asserted on the replica
 * and the primary themselves ({@code pg_stat_activity}, {@code pg_is_in_recovery()}).
 */
class DataSourceHandleIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE h (id int PRIMARY KEY, v text)",
          "INSERT INTO h SELECT g, 'v' || g FROM generate_series(1, 10) g").build();
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
  }

  private static OmniumDataSource dataSource(String app) {
    return new OmniumDataSource("jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?replica=" + cluster.replica(0).hostPort()
        + "&applicationName=" + app + "&replicaPoolSize=2&fallbackPoolSize=1&primaryPoolSize=2"
        + "&heartbeatInterval=100ms&maxAge=30s&user=" + cluster.user());
  }

  /** The state object behind a handle (package-private in the driver): what is lent again. */
  private static Object stateOf(Connection c) throws ReflectiveOperationException {
    Field f = OmniumConnection.class.getSuperclass().getDeclaredField("state");
    f.setAccessible(true);
    return f.get(c);
  }

  /** One read-only transaction: backend pid, recovery and port, as the server saw them. */
  private static List<String> readOnce(Connection c) throws SQLException {
    c.setReadOnly(true);
    c.setAutoCommit(false);
    List<String> seen = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()::text,"
        + " pg_is_in_recovery()::text, inet_server_port()::text, v FROM h WHERE id = ?")) {
      ps.setInt(1, 4);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        for (int i = 1; i <= 4; i++) seen.add(rs.getString(i));
      }
    }
    return seen;
  }

  /** Waits until the data source's read-only transactions run on the replica. */
  private static void awaitReplicaReads(OmniumDataSource ds) throws InterruptedException {
    Poll.until(Duration.ofSeconds(60), "reads reach the replica", () -> {
      try (Connection c = ds.getConnection()) {
        boolean onReplica = "true".equals(readOnce(c).get(1));
        c.commit();
        return onReplica;
      }
    });
  }

  /** The state of each client session of {@code app} on {@code node}, by backend pid. */
  private static Map<String, String> sessions(PgNode node, String app)
      throws SQLException {
    Map<String, String> states = new LinkedHashMap<>();
    try (Connection c = cluster.connect(node); PreparedStatement ps = c.prepareStatement(
        "SELECT pid::text, coalesce(state, '?') FROM pg_stat_activity WHERE application_name"
            + " LIKE ? AND backend_type = 'client backend' ORDER BY pid")) {
      ps.setString(1, app + "%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) states.put(rs.getString(1), rs.getString(2));
      }
    }
    return states;
  }

  /** A call on a closed connection. */
  private interface Call {
    void on(Connection c) throws Exception;
  }

  private static Map<String, Call> callsOnAClosedConnection() {
    Map<String, Call> calls = new LinkedHashMap<>();
    calls.put("createStatement", Connection::createStatement);
    calls.put("prepareStatement", c -> c.prepareStatement("SELECT 1"));
    calls.put("prepareCall", c -> c.prepareCall("SELECT 1"));
    calls.put("commit", Connection::commit);
    calls.put("rollback", Connection::rollback);
    calls.put("setAutoCommit", c -> c.setAutoCommit(true));
    calls.put("getAutoCommit", Connection::getAutoCommit);
    calls.put("setReadOnly", c -> c.setReadOnly(false));
    calls.put("isReadOnly", Connection::isReadOnly);
    calls.put("setTransactionIsolation",
        c -> c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE));
    calls.put("getTransactionIsolation", Connection::getTransactionIsolation);
    calls.put("setSchema", c -> c.setSchema("public"));
    calls.put("getSchema", Connection::getSchema);
    calls.put("setClientInfo", c -> c.setClientInfo("ApplicationName", "other"));
    calls.put("getClientInfo", Connection::getClientInfo);
    calls.put("setSavepoint", Connection::setSavepoint);
    calls.put("getWarnings", Connection::getWarnings);
    calls.put("clearWarnings", Connection::clearWarnings);
    calls.put("nativeSQL", c -> c.nativeSQL("SELECT 1"));
    calls.put("getHoldability", Connection::getHoldability);
    calls.put("getNetworkTimeout", Connection::getNetworkTimeout);
    calls.put("getTypeMap", Connection::getTypeMap);
    return calls;
  }

  /** The SQLState each call fails with, or "ok" when it did not fail. */
  private static Map<String, String> outcomes(Connection c) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, Call> e : callsOnAClosedConnection().entrySet()) {
      try {
        e.getValue().on(c);
        out.put(e.getKey(), "ok");
      } catch (SQLException ex) {
        out.put(e.getKey(), String.valueOf(ex.getSQLState()));
      } catch (Exception ex) {
        out.put(e.getKey(), ex.getClass().getSimpleName());
      }
    }
    return out;
  }

  @Test
  void aClosedConnectionFailsLikePgjdbcOnceItsStateServesAnotherConnection() throws Exception {
    String app = "handle1";
    Map<String, String> oracle;
    Properties p = new Properties();
    p.setProperty("user", cluster.user());
    try (Connection plain = DriverManager.getConnection("jdbc:postgresql://"
        + cluster.primary().hostPort() + "/" + cluster.database(), p)) {
      plain.close();
      oracle = outcomes(plain);
    }
    try (OmniumDataSource ds = dataSource(app)) {
      awaitReplicaReads(ds);
      OmniumConnection first = ds.getConnection();
      Object state = stateOf(first);
      assertEquals("v4", readOnce(first).get(3));
      PreparedStatement kept = first.prepareStatement("SELECT 1");
      first.commit();
      first.close();

      OmniumConnection second = ds.getConnection();
      assertNotSame(first, second);
      assertSame(state, stateOf(second), "the closed connection's state serves the next one");
      assertTrue(second.getAutoCommit(), "as new");
      assertFalse(second.isReadOnly(), "as new");
      List<String> seen = readOnce(second); // a read-only transaction left open on the replica
      assertEquals("true", seen.get(1), "on the replica");
      assertEquals(String.valueOf(cluster.replica(0).port()), seen.get(2));
      String pid = seen.get(0);
      // a write on the primary through another connection meanwhile
      try (Connection w = ds.getConnection(); Statement st = w.createStatement()) {
        assertEquals(1, st.executeUpdate("UPDATE h SET v = 'w' WHERE id = 9"));
      }
      assertEquals("idle in transaction", sessions(cluster.replica(0), app).get(pid));

      Map<String, String> closed = outcomes(first);
      assertEquals(oracle, closed, "a closed connection, as pgjdbc's");
      assertEquals("08003", closed.get("commit"));
      assertTrue(first.isClosed());
      assertFalse(first.isValid(1));
      SQLException statementClosed = null;
      try {
        kept.executeQuery();
      } catch (SQLException e) {
        statementClosed = e;
      }
      assertEquals("55000", statementClosed == null ? null : statementClosed.getSQLState(),
          "its statement was closed with it, as pgjdbc's");
      first.abort(Runnable::run);
      first.close();

      // nothing of that reached the connection that holds the state now, nor its session
      assertEquals("idle in transaction", sessions(cluster.replica(0), app).get(pid),
          "the replica transaction of the other connection is untouched");
      assertTrue(second.isReadOnly());
      assertFalse(second.getAutoCommit());
      assertEquals(seen, readOnce(second), "still the same transaction on the same session");
      second.commit();
      assertEquals("idle", sessions(cluster.replica(0), app).get(pid), "committed by its owner");
      second.close();
      assertTrue(second.isClosed());
    }
  }

  @Test
  void settingsOfTheLastUserNeverReachTheNext() throws Exception {
    String app = "handle2";
    try (OmniumDataSource ds = dataSource(app)) {
      Object state;
      try (Connection c = ds.getConnection()) {
        state = stateOf(c);
        c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
        c.setSchema("pg_catalog");
        c.setClientInfo("ApplicationName", app + "-mine");
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
            "SELECT current_setting('transaction_isolation'), current_schema(),"
                + " current_setting('application_name')")) {
          assertTrue(rs.next());
          assertEquals("serializable", rs.getString(1));
          assertEquals("pg_catalog", rs.getString(2));
          assertEquals(app + "-mine", rs.getString(3));
        }
      }
      try (Connection c = ds.getConnection(); Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT current_setting('transaction_isolation'),"
               + " current_schema(), current_setting('application_name'),"
               + " pg_is_in_recovery()")) {
        assertSame(state, stateOf(c), "lent again");
        assertTrue(rs.next());
        assertEquals("read committed", rs.getString(1), "the server's default again");
        assertEquals("public", rs.getString(2));
        assertEquals(app, rs.getString(3));
        assertEquals("f", rs.getString(4).substring(0, 1), "read-write work on the primary");
        assertEquals(Connection.TRANSACTION_READ_COMMITTED, c.getTransactionIsolation());
      }
    }
  }

  /**
   * A pool's handles unwrap to the pooled connection, the same object for every handle: so do
   * pgjdbc's own pooled connections (and HikariCP's), and an OpenTelemetry agent keys its
   * description of the database by that object. What it unwraps to acts for the open handle
   * only: the same session and transaction, closed with it, 08003 once it is.
   */
  @Test
  void aConnectionUnwrapsToItsPoolsConnectionAsPgjdbcsPooledConnectionsDo() throws Exception {
    PGConnectionPoolDataSource pooled = new PGConnectionPoolDataSource();
    pooled.setUrl("jdbc:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database());
    pooled.setUser(cluster.user());
    PooledConnection physical = pooled.getPooledConnection();
    try {
      Connection h1 = physical.getConnection();
      Connection u1 = h1.unwrap(Connection.class);
      assertNotSame(h1, u1, "pgjdbc: a pooled handle unwraps to the physical connection");
      h1.close();
      Connection h2 = physical.getConnection();
      assertSame(u1, h2.unwrap(Connection.class), "pgjdbc: the same one for the next handle");
      h2.close();
    } finally {
      physical.close();
    }

    String app = "handle3";
    Properties p = new Properties();
    p.setProperty("user", cluster.user());
    try (Connection direct = DriverManager.getConnection("jdbc:omnium:postgresql://"
        + cluster.primary().hostPort() + "/" + cluster.database() + "?replica="
        + cluster.replica(0).hostPort() + "&applicationName=" + app + "-driver", p)) {
      assertSame(direct, direct.unwrap(Connection.class), "driver mode: itself, as pgjdbc's");
    }
    try (OmniumDataSource ds = dataSource(app)) {
      awaitReplicaReads(ds);
      Connection first = ds.getConnection();
      Connection pool = first.unwrap(Connection.class);
      assertNotSame(first, pool);
      first.close();
      assertThrows(SQLException.class, pool::createStatement, "no handle open");
      assertTrue(pool.isClosed());

      Connection second = ds.getConnection();
      assertSame(pool, second.unwrap(Connection.class), "one object for the pool's state");
      assertFalse(pool.isClosed());
      List<String> seen = readOnce(second); // a read-only transaction left open on the replica
      assertEquals("true", seen.get(1), "on the replica");
      assertFalse(pool.getAutoCommit(), "the open handle's state");
      try (Statement st = pool.createStatement();
           ResultSet rs = st.executeQuery("SELECT pg_backend_pid()::text,"
               + " pg_is_in_recovery()::text, current_setting('transaction_read_only')")) {
        assertTrue(rs.next());
        assertEquals(seen.get(0), rs.getString(1), "the same session");
        assertEquals("true", rs.getString(2));
        assertEquals("on", rs.getString(3), "in the same read-only transaction");
      }
      assertEquals("idle in transaction", sessions(cluster.replica(0), app).get(seen.get(0)));

      pool.close(); // closes the handle it acts for, as pgjdbc's physical close ends its handle
      assertTrue(second.isClosed());
      assertTrue(pool.isClosed());
      assertEquals("idle", sessions(cluster.replica(0), app).get(seen.get(0)),
          "its transaction ended with it");
      SQLException closed = assertThrows(SQLException.class,
          () -> pool.prepareStatement("SELECT 1"));
      assertEquals("08003", closed.getSQLState());
      try (Connection third = ds.getConnection(); Statement st = third.createStatement();
           ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
        assertSame(pool, third.unwrap(Connection.class), "the state was lent again");
        assertTrue(rs.next());
        assertFalse(rs.getBoolean(1), "a new connection's work: on the primary");
      }
    }
  }
}
