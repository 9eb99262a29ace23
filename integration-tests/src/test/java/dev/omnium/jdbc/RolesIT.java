package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Rows;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Roles are discovered: every node listed in the primary list and in {@code replica=}, the standby
 * first, as a Patroni user writes it. The fallback route finds the primary through pgjdbc's
 * {@code targetServerType=primary} and its sessions are read-only on the server; {@code check} is
 * healthy; no replica session is ever opened on the primary. In package {@code dev.omnium.jdbc}
 * for {@link HealthCheck}.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RolesIT {
  /** No sandbox heartbeat: the driver's own writer (heartbeatWriter=true) beats. */
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).requirePasswords()
      .withoutHeartbeat()
      .sql("CREATE TABLE roles_items (id int PRIMARY KEY)", "INSERT INTO roles_items VALUES (1)")
      .build();
  static PgCluster cluster;
  static PgNode primary;
  static PgNode standby;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
    primary = cluster.primary();
    standby = cluster.replica(0);
  }

  static String url(String app) {
    String nodes = standby.hostPort() + "," + primary.hostPort();
    return "jdbc:omnium:postgresql://" + nodes + "/" + cluster.database() + "?replica=" + nodes
        + "&heartbeatWriter=true&heartbeatInterval=100ms&maxAge=1s&applicationName=" + app
        + "&user=" + cluster.user() + "&password=" + cluster.password();
  }

  @Test
  @Order(1)
  void fallbackAndCheckWorkWithEveryNodeInBothLists() throws Exception {
    String app = "roles";
    try (Connection w = DriverManager.getConnection(url(app));
         Connection r = DriverManager.getConnection(url(app))) {
      // The write binds the primary of the two-host list and starts the heartbeat writer's router.
      try (Statement st = w.createStatement(); ResultSet rs = st.executeQuery(
          "SELECT pg_is_in_recovery(), inet_server_port()")) {
        rs.next();
        assertFalse(rs.getBoolean(1));
        assertEquals(primary.port(), rs.getInt(2));
      }
      r.setReadOnly(true);
      poll("a read on the standby", () -> where(r)[0].equals("true"));

      cluster.pauseReplay(standby); // lag grows past maxAge: the fallback route serves
      try {
        poll("a read on the fallback route", () -> where(r)[2].equals(app + ":fallback"));
        String[] at = where(r);
        assertEquals("false", at[0], "the fallback read ran on a standby");
        assertEquals(String.valueOf(primary.port()), at[1]);
        assertEquals("on", at[3], "transaction_read_only on the fallback session");
        assertEquals("on", at[4], "default_transaction_read_only on the fallback session");
        r.setAutoCommit(false);
        try (Statement st = r.createStatement()) {
          SQLException e = assertThrows(SQLException.class,
              () -> st.executeUpdate("INSERT INTO roles_items VALUES (2)"));
          assertEquals("25006", e.getSQLState(), e.toString());
        }
        r.rollback();
        r.setAutoCommit(true);
        try (Connection c = cluster.connect(primary); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE"
                 + " application_name = '" + app + ":replica'")) {
          rs.next();
          assertEquals(0, rs.getInt(1), "replica sessions open on the primary");
        }
      } finally {
        cluster.resumeReplay(standby);
      }
      poll("reads back on the standby", () -> where(r)[0].equals("true"));

      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      int exit = HealthCheck.run(url("rolescheck"), new Properties(), false,
          new PrintStream(bytes, true, StandardCharsets.UTF_8));
      String out = bytes.toString(StandardCharsets.UTF_8);
      assertEquals(0, exit, out);
      assertTrue(out.contains("is the primary now"), out);
      assertFalse(out.contains(cluster.password()), "the password leaked");
    }
  }

  /**
   * Runs last (it stops the primary): with no primary among the listed hosts and no fresh standby,
   * a read fails within poolTimeout with a message that names each host and why.
   */
  @Test
  @Order(2)
  void aReadThatNoNodeCanServeFailsInBoundedTimeNamingTheCause() throws Exception {
    String url = url("rolesdown") + "&poolTimeout=1s&connectTimeout=2";
    try (Connection r = DriverManager.getConnection(url)) {
      r.setReadOnly(true);
      poll("a read on the standby", () -> where(r)[0].equals("true"));
      cluster.pauseReplay(standby);
      try {
        poll("a read on the fallback route", () -> where(r)[2].equals("rolesdown:fallback"));
        cluster.stop(primary, true);
        long start = System.nanoTime();
        SQLException e = null;
        // The first attempts may still meet the crashed session (lost, then retried once).
        while (e == null || !e.getMessage().contains("no primary among")) {
          e = assertThrows(SQLException.class, () -> where(r));
          assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), e.toString());
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(e.getMessage().contains(primary.hostPort()) && e.getMessage()
            .contains(standby.hostPort() + ": a standby"), e.getMessage());
        assertTrue(e.getSQLState().startsWith("08"), e.getSQLState());
        assertFalse(e.getMessage().contains(cluster.password()), "the password leaked");
        System.out.println("FIGURES roles-unservable-read: failedAfterMs=" + ms + " message="
            + e.getMessage());
      } finally {
        cluster.resumeReplay(standby);
      }
    }
  }

  /** In recovery, port, application_name, transaction_read_only, default_transaction_read_only. */
  private static String[] where(Connection c) throws SQLException {
    return Rows.first(c, "SELECT pg_is_in_recovery()::text, inet_server_port(),"
        + " current_setting('application_name'), current_setting('transaction_read_only'),"
        + " current_setting('default_transaction_read_only')");
  }

  interface Check {
    boolean ok() throws Exception;
  }

  private static void poll(String what, Check check) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        if (check.ok()) return;
      } catch (Exception e) {
        last = e;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("timed out waiting for " + what, last);
  }
}
