package dev.omnium.sandbox;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

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
