package dev.omnium.sandbox.testkit;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Counts sessions in one server's {@code pg_stat_activity}, by application_name. */
public final class Sessions {
  private static final String OTHERS = " AND pid <> pg_backend_pid()";

  private Sessions() { }

  /**
   * @param cluster the cluster
   * @param node the server to ask
   * @param applicationName the exact application_name (with its route suffix)
   * @return how many sessions it has, the asking one excluded
   * @throws SQLException when the server cannot be asked
   */
  public static int count(PgCluster cluster, PgNode node, String applicationName)
      throws SQLException {
    return count(cluster, node, "application_name = ?" + OTHERS, applicationName);
  }

  /**
   * @param cluster the cluster
   * @param node the server to ask
   * @param applicationPrefix an application name; any route suffix matches
   * @return how many sessions it has, the asking one excluded
   * @throws SQLException when the server cannot be asked
   */
  public static int countLike(PgCluster cluster, PgNode node, String applicationPrefix)
      throws SQLException {
    return count(cluster, node, "application_name LIKE ?" + OTHERS, applicationPrefix + "%");
  }

  /**
   * @param cluster the cluster
   * @param node the server to ask
   * @param applicationName the exact application_name
   * @param state a {@code pg_stat_activity.state}, e.g. {@code idle in transaction}
   * @return how many sessions of it are in that state, the asking one excluded
   * @throws SQLException when the server cannot be asked
   */
  public static int inState(PgCluster cluster, PgNode node, String applicationName, String state)
      throws SQLException {
    return count(cluster, node, "application_name = ? AND state = ?" + OTHERS, applicationName,
        state);
  }

  /**
   * What a failed wait for sessions to end should say: each session whose application_name starts
   * with {@code applicationPrefix}, with its state, age and last query.
   *
   * @param cluster the cluster
   * @param node the server to ask
   * @param applicationPrefix an application name; any route suffix matches
   * @return one line per session, the asking one excluded; "none" when there is none
   * @throws SQLException when the server cannot be asked
   */
  public static String describeLike(PgCluster cluster, PgNode node, String applicationPrefix)
      throws SQLException {
    StringBuilder b = new StringBuilder();
    try (Connection c = cluster.connect(node);
        PreparedStatement ps = c.prepareStatement("SELECT application_name, state,"
            + " round(extract(epoch FROM now() - backend_start)::numeric, 1), query"
            + " FROM pg_stat_activity WHERE application_name LIKE ?" + OTHERS)) {
      ps.setString(1, applicationPrefix + "%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          b.append(b.length() == 0 ? "" : "; ").append(rs.getString(1)).append(" (")
              .append(rs.getString(2)).append(", started ").append(rs.getString(3))
              .append(" s ago, last query: ").append(rs.getString(4)).append(')');
        }
      }
    }
    return b.length() == 0 ? "none" : b.toString();
  }

  private static int count(PgCluster cluster, PgNode node, String where, String... params)
      throws SQLException {
    try (Connection c = cluster.connect(node);
        PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE " + where)) {
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
