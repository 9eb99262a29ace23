package dev.omnium.bench;

import dev.omnium.sandbox.Heartbeat;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;

/**
 * The benchmarks' own real cluster: a PostgreSQL 18 primary and one streaming replica from the
 * sandbox, with {@code pg_stat_statements} loaded (to count what each contender sends), the
 * read and write tables, and a heartbeat writer updating {@code replica_heartbeat} on the primary
 * every {@link #HEARTBEAT_PERIOD}, without which omnium would send every read to the fallback pool.
 *
 * <p>Every contender gets exactly the same cluster, tables and server settings.
 */
public final class BenchCluster implements AutoCloseable {
  /** Rows in {@code bench_read}; reads pick a primary key uniformly from 1..ROWS. */
  public static final int ROWS = 10_000;
  public static final Duration HEARTBEAT_PERIOD = Duration.ofMillis(100);

  public static final String READ_SQL = "SELECT v, payload FROM bench_read WHERE id = ?";
  public static final String WRITE_SQL = "INSERT INTO bench_write (v) VALUES (?)";

  /**
   * The role contender (c) connects as. omnium caps the sessions of all its configurations in one
   * process per server, database and user (the first configuration's {@code replicaPoolSize}):
   * (b) and (c) run in one JVM, and as one user their two routers would share 16 replica sessions,
   * each switch between them closing the other's. A service with one omnium data source per user
   * has no such sharing, so each omnium contender gets a user of its own.
   */
  public static final String DATA_SOURCE_USER = "bench_ds";

  private final PgCluster cluster;
  private final Heartbeat heartbeat;

  private BenchCluster(PgCluster cluster) throws SQLException {
    this.cluster = cluster;
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      st.execute("CREATE TABLE bench_read (id int PRIMARY KEY, v bigint NOT NULL, payload text NOT NULL)");
      st.execute("INSERT INTO bench_read SELECT g, g * 7, md5(g::text) FROM generate_series(1, " + ROWS + ") g");
      st.execute("CREATE TABLE bench_write (id bigserial PRIMARY KEY, v int NOT NULL, at timestamptz NOT NULL DEFAULT now())");
      // a function the driver cannot classify from a statement's text (RoundTrips: checked at return)
      st.execute("CREATE FUNCTION bench_plain(x bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT x + 1'");
      // OmniumDataSource's own role (see DATA_SOURCE_USER): the same rights as the sandbox's user
      st.execute("CREATE ROLE " + DATA_SOURCE_USER + " LOGIN SUPERUSER");
      st.execute("VACUUM ANALYZE bench_read");
      st.execute("VACUUM ANALYZE bench_write");
    }
    heartbeat = Heartbeat.start(cluster, HEARTBEAT_PERIOD); // also waits until the replica has the tables
  }

  /** Starts a fresh primary + replica (PostgreSQL 18 unless {@code omnium.pg.version} says otherwise). */
  public static BenchCluster start() {
    String version = System.getProperty("omnium.pg.version", "18");
    PgCluster c = PgCluster.builder()
        .replicas(1)
        .version(version)
        .setting("shared_preload_libraries", "pg_stat_statements")
        .setting("pg_stat_statements.track_utility", "on")
        .setting("pg_stat_statements.max", "1000")
        .start();
    try {
      return new BenchCluster(c);
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw new IllegalStateException("cannot prepare the benchmark cluster: " + e, e);
    }
  }

  public PgCluster sandbox() {
    return cluster;
  }

  public PgNode primary() {
    return cluster.primary();
  }

  public PgNode replica() {
    return cluster.replica(0);
  }

  public String database() {
    return cluster.database();
  }

  public String user() {
    return cluster.user();
  }

  /** A superuser connection for the harness itself (never measured). */
  public Connection control(PgNode node) throws SQLException {
    Properties p = new Properties();
    p.setProperty("ApplicationName", "bench-control");
    p.setProperty("assumeMinServerVersion", "9.0"); // application_name in the startup packet, no SET
    p.setProperty("socketTimeout", "30");
    return cluster.connect(node, p);
  }

  @Override
  public void close() {
    heartbeat.close();
    cluster.close();
  }
}
