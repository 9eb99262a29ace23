package dev.omnium.it.contract;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * URLs whose pools (replica, fallback, the DataSource's primary pool) hold one session each, so
 * the next borrower of a route gets the very session the previous one changed.
 */
final class PoolsOfOne {
  private PoolsOfOne() { }

  /** Reads on the replica (while fresh within an hour) or, without one, on the fallback pool. */
  static String url(PgCluster cluster, String app, boolean replica) {
    return "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?applicationName=" + app + (replica ? "&replica=" + cluster.replica(0).hostPort() : "")
        + "&maxAge=1h&heartbeatInterval=100ms&replicaPoolSize=1&fallbackPoolSize=1"
        + "&primaryPoolSize=1&user=" + cluster.user();
  }

  /** The first column of the first row of {@code sql}, which must return one. */
  static String one(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      assertTrue(rs.next(), sql);
      return rs.getString(1);
    }
  }
}
