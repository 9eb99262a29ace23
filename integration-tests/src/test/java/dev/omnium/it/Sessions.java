package dev.omnium.it;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Counts sessions in pg_stat_activity of one server, by application_name. */
final class Sessions {
  private Sessions() { }

  static int count(PgCluster cluster, PgNode node, String applicationName) throws SQLException {
    try (Connection c = cluster.connect(node);
         PreparedStatement ps = c.prepareStatement(
             "SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND pid <> pg_backend_pid()")) {
      ps.setString(1, applicationName);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** Sessions of an application on a server, any route suffix. */
  static int countLike(PgCluster cluster, PgNode node, String applicationPrefix) throws SQLException {
    try (Connection c = cluster.connect(node);
         PreparedStatement ps = c.prepareStatement(
             "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE ? AND pid <> pg_backend_pid()")) {
      ps.setString(1, applicationPrefix + "%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
