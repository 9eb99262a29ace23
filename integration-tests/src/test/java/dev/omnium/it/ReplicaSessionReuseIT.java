package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replica session lent again and again by omnium's replica pool: its statements run on the
 * pgjdbc session itself (not through the pool's proxies), the settings the server reported when
 * it was first lent are what every later return is checked against, and it goes back with no
 * transaction open. Asserted on the replica itself: the same backend, its settings and its state
 * in {@code pg_stat_activity}.
 */
class ReplicaSessionReuseIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE r (id int PRIMARY KEY, v text)",
          "INSERT INTO r SELECT g, 'v' || g FROM generate_series(1, 10) g",
          "CREATE ROLE reuse_other NOLOGIN").build();
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
  }

  /**
   * One replica session and one fallback session: every read on the replica is the same one.
   * Returned once reads reach the replica.
   */
  private static OmniumDataSource onReplica(String app) throws Exception {
    OmniumDataSource ds = new OmniumDataSource("jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?replica=" + cluster.replica(0).hostPort()
        + "&applicationName=" + app + "&replicaPoolSize=1&fallbackPoolSize=1&primaryPoolSize=1"
        + "&heartbeatInterval=100ms&maxAge=30s&user=" + cluster.user());
    try {
      awaitReplica(ds);
    } catch (Exception | AssertionError e) {
      ds.close();
      throw e;
    }
    return ds;
  }

  private static void awaitReplica(OmniumDataSource ds) throws InterruptedException {
    Poll.until(Duration.ofSeconds(60), "reads reach the replica",
        () -> "true".equals(sessionSeen(ds).get(1)));
  }

  private static String one(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      return one(st, sql);
    }
  }

  private static String one(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      assertTrue(rs.next(), sql);
      return rs.getString(1);
    }
  }

  /** Backend pid, recovery, port, TimeZone and DateStyle, in one read-only transaction. */
  private static List<String> sessionSeen(OmniumDataSource ds) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      List<String> seen = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()::text,"
          + " pg_is_in_recovery()::text, inet_server_port()::text, current_setting('TimeZone'),"
          + " current_setting('DateStyle'), (SELECT v FROM r WHERE id = ?)")) {
        ps.setInt(1, 3);
        try (ResultSet rs = ps.executeQuery()) {
          assertTrue(rs.next());
          for (int i = 1; i <= 6; i++) seen.add(rs.getString(i));
        }
      }
      c.commit();
      return seen;
    }
  }

  /** The replica's client sessions of {@code app} that are not idle. */
  private static List<String> notIdle(String app) throws SQLException {
    List<String> states = new ArrayList<>();
    try (Connection c = cluster.connect(cluster.replica(0)); PreparedStatement ps =
        c.prepareStatement("SELECT pid || ':' || coalesce(state, '?') FROM pg_stat_activity"
            + " WHERE application_name = ? AND backend_type = 'client backend'"
            + " AND state IS DISTINCT FROM 'idle'")) {
      ps.setString(1, app);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) states.add(rs.getString(1));
      }
    }
    return states;
  }

  @Test
  void aSettingChangedThroughAFunctionIsUndoneBeforeTheSessionIsLentAgain() throws Exception {
    String app = "reuse1";
    try (OmniumDataSource ds = onReplica(app)) {
      List<String> first = sessionSeen(ds);
      String pid = first.get(0);
      assertEquals(String.valueOf(cluster.replica(0).port()), first.get(2), "on the replica");
      assertEquals("v3", first.get(5));
      assertEquals(pid, sessionSeen(ds).get(0), "one replica session, lent again");
      // no SET statement: the change comes back only as the server's ParameterStatus report
      try (Connection c = ds.getConnection()) {
        c.setReadOnly(true);
        c.setAutoCommit(false);
        assertEquals("Pacific/Chatham", one(c, "SELECT set_config('TimeZone', 'Pacific/Chatham',"
            + " false)"));
        assertEquals("ISO, DMY", one(c, "SELECT set_config('DateStyle', 'ISO, DMY', false)"));
        assertEquals(pid, one(c, "SELECT pg_backend_pid()::text"));
        c.commit();
      }
      for (int i = 0; i < 3; i++) {
        List<String> again = sessionSeen(ds);
        assertEquals("true", again.get(1), "still on the replica");
        assertEquals(first.get(3), again.get(3), "TimeZone as the session started");
        assertEquals(first.get(4), again.get(4), "DateStyle as the session started");
        assertEquals(pid, again.get(0), "reset, not evicted: the same backend");
      }
      assertEquals(List.of(), notIdle(app), "every session went back with no transaction open");
    }
  }

  /**
   * The replica pool lends its sessions in the state read-only transactions want (auto-commit
   * off), so an autocommit read on the same session must turn it on and give it back that way:
   * the server sees each autocommit statement as a transaction of its own, and each transaction
   * as one, on the one backend.
   */
  @Test
  void oneSessionServesTransactionsAndAutocommitReadsEachAsPgjdbcWould() throws Exception {
    String app = "reuse3";
    try (OmniumDataSource ds = onReplica(app)) {
      String pid = sessionSeen(ds).get(0);
      for (int round = 0; round < 2; round++) {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
          c.setReadOnly(true);
          // one statement held open: both run on one binding of the session; now() is the start
          // of the statement's transaction
          String first = one(st, "SELECT now()::text FROM pg_sleep(0.01)");
          assertNotEquals(first, one(st, "SELECT now()::text"),
              "each autocommit statement is a transaction of its own");
          assertEquals(pid, one(st, "SELECT pg_backend_pid()::text"), "the one replica session");
        }
        assertEquals(List.of(), notIdle(app), "an autocommit read leaves no transaction open");
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
          c.setReadOnly(true);
          c.setAutoCommit(false);
          String first = one(st, "SELECT now()::text FROM pg_sleep(0.01)");
          assertEquals(first, one(st, "SELECT now()::text"), "both statements in one transaction");
          assertEquals(pid, one(st, "SELECT pg_backend_pid()::text"));
          assertEquals("true", one(st, "SELECT pg_is_in_recovery()::text"));
          c.commit();
        }
        assertEquals(List.of(), notIdle(app), "a committed read leaves no transaction open");
      }
    }
  }

  /**
   * session_authorization is reported, and RESET ALL does not undo it (nor the role): the reset
   * on return undoes both (issue 30), so the same replica session is lent again as the login role.
   */
  @Test
  void aSessionAuthorizationChangeIsUndoneBeforeTheSessionIsLentAgain() throws Exception {
    String app = "reuse2";
    try (OmniumDataSource ds = onReplica(app)) {
      String pid = sessionSeen(ds).get(0);
      try (Connection c = ds.getConnection()) {
        c.setReadOnly(true);
        c.setAutoCommit(false);
        assertEquals("reuse_other",
            one(c, "SELECT set_config('session_authorization', 'reuse_other', false)"));
        assertEquals(pid, one(c, "SELECT pg_backend_pid()::text"));
        c.commit();
      }
      List<String> next = sessionSeen(ds);
      assertEquals(pid, next.get(0), "reset, not closed: the same backend");
      assertEquals("true", next.get(1), "on the replica");
      try (Connection c = ds.getConnection()) {
        c.setReadOnly(true);
        assertEquals(cluster.user(), one(c, "SELECT session_user"));
        assertEquals(cluster.user(), one(c, "SELECT current_user"));
      }
      assertEquals(List.of(), notIdle(app));
    }
  }
}
