package dev.omnium.fw;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.Heartbeat;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * One primary + one streaming replica with a test-side heartbeat writer, shared by the tests of one
 * class, plus the server-side probes the tests assert with.
 */
public final class Sandbox implements AutoCloseable {
  public final PgCluster cluster;
  private final Heartbeat heartbeat;

  private Sandbox(PgCluster cluster, Heartbeat heartbeat) {
    this.cluster = cluster;
    this.heartbeat = heartbeat;
  }

  public static Sandbox start() throws Exception {
    long t0 = System.nanoTime();
    PgCluster cluster = PgCluster.builder().replicas(1).start();
    try {
      Sandbox s = new Sandbox(cluster, Heartbeat.start(cluster, Duration.ofMillis(100)));
      System.out.printf("sandbox: PostgreSQL %s primary + 1 replica up in %d ms%n", cluster.version(),
          (System.nanoTime() - t0) / 1_000_000);
      return s;
    } catch (Exception | Error e) {
      cluster.close();
      throw e;
    }
  }

  public PgNode primary() {
    return cluster.primary();
  }

  public PgNode replica() {
    return cluster.replica(0);
  }

  /**
   * The URL a user writes: {@code jdbc:omnium:postgresql://PRIMARY/omnium?replica=REPLICA&applicationName=app}
   * plus {@code extra} omnium keys (e.g. {@code maxAge=1s&heartbeatInterval=200ms}).
   */
  public String omniumUrl(String app, String extra) {
    return "jdbc:omnium:postgresql://" + primary().hostPort() + "/" + cluster.database()
        + "?replica=" + replica().hostPort() + "&applicationName=" + app + (extra == null ? "" : "&" + extra);
  }

  /** Runs SQL on the primary through plain pgjdbc (fixtures, not the code under test). */
  public void execOnPrimary(String... sql) throws SQLException {
    try (Connection c = cluster.connect(primary()); Statement st = c.createStatement()) {
      for (String s : sql) st.execute(s);
    }
  }

  /** A single value read straight from a node through plain pgjdbc. */
  public String queryOne(PgNode node, String sql, Object... params) throws SQLException {
    try (Connection c = cluster.connect(node); PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) ps.setObject(i + 1, params[i]);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  public void awaitCaughtUp() {
    cluster.awaitCaughtUp(replica());
  }

  /** Sessions of {@code applicationName} on {@code node} in state {@code state} (e.g. 'idle in transaction'). */
  public int sessions(PgNode node, String applicationName, String state) throws SQLException {
    return Integer.parseInt(queryOne(node, "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
        + " AND state = ? AND pid <> pg_backend_pid()", applicationName, state));
  }

  @Override
  public void close() throws Exception {
    OmniumDriver.shutdown();
    try {
      heartbeat.close();
    } finally {
      cluster.close();
    }
  }
}
