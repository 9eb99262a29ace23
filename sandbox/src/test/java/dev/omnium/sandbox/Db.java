package dev.omnium.sandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Test helpers: one-shot SQL against a node and polling with a deadline. */
final class Db {

  private Db() {}

  static void exec(PgCluster cluster, PgNode node, String sql) throws SQLException {
    try (Connection c = cluster.connect(node); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  static String one(PgCluster cluster, PgNode node, String sql) throws SQLException {
    try (Connection c = cluster.connect(node); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /**
   * A child JVM running {@code SandboxMain --replicas 1 --for 5m} with {@code more} arguments,
   * returned once it printed its banner (its servers run); the caller kills it.
   *
   * @return the child, and what it printed before the banner when it did not start
   */
  static Process childSandbox(String... more) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
        "-Domnium.pg.version=" + PgBinaries.defaultVersion(), SandboxMain.class.getName(),
        "--replicas", "1", "--for", "5m"));
    cmd.addAll(List.of(more));
    Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(
        new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder seen = new StringBuilder();
    String line;
    while ((line = out.readLine()) != null && !line.contains("omnium:")) {
      seen.append(line).append('\n');
    }
    if (line == null) {
      child.destroyForcibly();
      throw new AssertionError("the child sandbox did not start:\n" + seen);
    }
    return child;
  }

  static void await(Duration timeout, String what, Poll.Check check) {
    Poll.until(timeout, what, check);
  }

  static boolean streaming(PgCluster cluster, PgNode replica) throws SQLException {
    return "streaming".equals(one(cluster, cluster.primary(),
        "SELECT state FROM pg_stat_replication WHERE application_name = '" + replica.name() + "'"));
  }

  /**
   * False when OMNIUM_PG_BIN / omnium.pg.bin points the suite at a local install of any version.
   */
  static boolean bundledBinaries() {
    String prop = System.getProperty("omnium.pg.bin");
    String env = System.getenv("OMNIUM_PG_BIN");
    return (prop == null || prop.isBlank()) && (env == null || env.isBlank());
  }

  /** The major version the suite runs against, as configured by the failsafe execution. */
  static String requestedMajor() {
    return PgBinaries.defaultVersion().split("\\.")[0];
  }
}
