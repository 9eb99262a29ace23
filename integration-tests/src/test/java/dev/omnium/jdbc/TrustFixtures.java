package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.it.reliability.LogCapture;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * What issue 30's suites share: login roles of their own (each its own router, a password no other
 * test changes), a password changed on the server with every session of the role ended, WAL
 * positions read straight from a node, {@code check}'s report, and the WARN lines a state logged.
 */
final class TrustFixtures {
  private TrustFixtures() { }

  /** A login role that may read the heartbeat table, replayed on every replica. */
  static void role(PgSandbox sandbox, String name, String password) throws SQLException {
    sandbox.execOnPrimary("CREATE ROLE " + name + " LOGIN PASSWORD '" + password + "'",
        "GRANT SELECT ON replica_heartbeat TO " + name);
    sandbox.awaitCaughtUp();
  }

  /** The role's password changes on the server (and reaches the replicas). */
  static void setPassword(PgSandbox sandbox, String role, String password) throws SQLException {
    sandbox.execOnPrimary("ALTER ROLE " + role + " PASSWORD '" + password + "'");
    sandbox.awaitCaughtUp();
  }

  /** Ends every session of {@code role} on every server: whatever holds one must log in again. */
  static void terminate(PgSandbox sandbox, String role) throws SQLException {
    for (PgNode node : sandbox.cluster().replicas()) terminate(sandbox.cluster(), node, role);
    terminate(sandbox.cluster(), sandbox.primary(), role);
  }

  private static void terminate(PgCluster cluster, PgNode node, String role) throws SQLException {
    try (Connection c = cluster.connect(node); Statement st = c.createStatement()) {
      st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '"
          + role + "'");
    }
  }

  /** A WAL position ({@code pg_current_wal_insert_lsn()}, {@code pg_last_wal_replay_lsn()}). */
  static long lsn(PgCluster cluster, PgNode node, String sql) throws SQLException {
    try (Connection c = cluster.connect(node); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return Lsn.parse(rs.getString(1));
    }
  }

  /** {@code check}'s report of {@code url}, which must exit DEGRADED and name {@code state}. */
  static String degradedCheckNaming(String url, String state) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = HealthCheck.run(url, new Properties(), false,
        new PrintStream(out, true, StandardCharsets.UTF_8));
    String report = out.toString(StandardCharsets.UTF_8);
    assertEquals(HealthCheck.DEGRADED, exit, report);
    assertTrue(report.contains(state), report);
    return report;
  }

  /** Asserts that exactly one WARN line since {@code mark} names {@code state}; returns it. */
  static String oneWarning(int mark, String state) {
    List<String> warnings = LogCapture.since(mark).stream()
        .filter(l -> l.contains("WARN") && l.contains(state)).collect(Collectors.toList());
    assertEquals(1, warnings.size(), "one WARN line naming " + state + ": " + warnings);
    return warnings.get(0);
  }
}
