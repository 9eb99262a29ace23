package dev.omnium.conformance;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

/**
 * The servers as the harness sees them: one superuser pgjdbc connection per node, opened by the
 * sandbox, never through the driver under test.
 */
final class ClusterServer implements Server, AutoCloseable {
  /** A side's sessions on any route: the primary's own name and omnium's route suffixes. */
  private static final String SESSIONS = "(a.application_name = ? OR a.application_name = ?"
      + " || ':replica' OR a.application_name = ? || ':fallback') AND a.pid <> pg_backend_pid()";

  private final PgCluster cluster;
  private final List<PgNode> nodes = new ArrayList<>();
  private final List<Connection> admin = new ArrayList<>();

  ClusterServer(PgCluster cluster) throws SQLException {
    this.cluster = cluster;
    nodes.add(cluster.primary());
    nodes.addAll(cluster.replicas());
    Properties p = new Properties();
    p.setProperty("ApplicationName", "conformance-observer");
    p.setProperty("socketTimeout", "60");
    for (PgNode n : nodes) {
      Connection c = cluster.connect(n, p);
      try (Statement st = c.createStatement()) {
        st.execute("SET lock_timeout = '10s'");
      }
      admin.add(c);
    }
  }

  private Connection primary() {
    return admin.get(0);
  }

  @Override
  public String rows(String table) throws SQLException {
    try (Statement st = primary().createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT * FROM " + table + " ORDER BY 1")) {
        return Run.renderRows(rs);
      } catch (SQLException e) {
        return Run.failure(e);
      }
    }
  }

  @Override
  public String activity(String app) throws SQLException {
    List<String> sessions = new ArrayList<>();
    List<String> locks = new ArrayList<>();
    for (Connection c : admin) {
      try (PreparedStatement ps = c.prepareStatement("SELECT a.state FROM pg_stat_activity a WHERE "
          + SESSIONS + " AND a.state IS NOT NULL AND a.state <> 'idle'")) {
        bind(ps, app);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            sessions.add(rs.getString(1));
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT l.locktype || ':' || CASE"
          + " WHEN l.locktype = 'relation' THEN l.relation::regclass::text"
          + " ELSE l.objid::text END || ':' || l.mode || ':' || l.granted"
          + " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE " + SESSIONS
          + " AND (l.locktype = 'advisory'"
          + " OR (l.locktype = 'relation' AND l.relation >= 16384))")) {
        bind(ps, app);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            locks.add(rs.getString(1));
          }
        }
      }
    }
    Collections.sort(sessions);
    Collections.sort(locks);
    return "sessions=" + sessions + " locks=" + locks;
  }

  private static void bind(PreparedStatement ps, String app) throws SQLException {
    ps.setString(1, app);
    ps.setString(2, app);
    ps.setString(3, app);
  }

  @Override
  public void setup(List<String> sql) throws SQLException {
    try (Statement st = primary().createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
    sync();
  }

  @Override
  public void sync() {
    for (PgNode r : cluster.replicas()) {
      cluster.awaitCaughtUp(r);
    }
  }

  @Override
  public void terminate(long pid, int port) throws Exception {
    String name = node(port);
    int i = name.equals("primary") ? 0 : Integer.parseInt(name.substring("replica".length()));
    Connection c = admin.get(i);
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?::int)")) {
      ps.setLong(1, pid);
      ps.executeQuery().close();
    }
    awaitGone(c, pid);
  }

  @Override
  public String settledActivity(String app) throws Exception {
    long deadline = System.nanoTime() + 3_000_000_000L;
    String a = activity(app);
    while (!a.equals("sessions=[] locks=[]") && System.nanoTime() < deadline) {
      Thread.sleep(20);
      a = activity(app);
    }
    return a;
  }

  private static void awaitGone(Connection c, long pid) throws Exception {
    long deadline = System.nanoTime() + 10_000_000_000L;
    try (PreparedStatement ps =
        c.prepareStatement("SELECT 1 FROM pg_stat_activity WHERE pid = ?")) {
      ps.setLong(1, pid);
      while (true) {
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return;
          }
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("session " + pid + " still there 10 s after termination");
        }
        Thread.sleep(10);
      }
    }
  }

  @Override
  public void reset(String app) throws SQLException {
    for (Connection c : admin) {
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(a.pid) FROM"
          + " pg_stat_activity a WHERE " + SESSIONS + " AND a.state IS NOT NULL"
          + " AND a.state <> 'idle'")) {
        bind(ps, app);
        ps.executeQuery().close();
      }
    }
  }

  @Override
  public String node(int port) {
    if (port == cluster.primary().port()) {
      return "primary";
    }
    for (int i = 0; i < cluster.replicas().size(); i++) {
      if (cluster.replica(i).port() == port) {
        return "replica" + (i + 1);
      }
    }
    return Integer.toString(port);
  }

  @Override
  public void close() {
    for (Connection c : admin) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // the cluster is going away
      }
    }
  }
}
