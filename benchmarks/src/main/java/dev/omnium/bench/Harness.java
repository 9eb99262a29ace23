package dev.omnium.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * One trial's world: its own cluster and one contender's data source, checked before measuring.
 * Started in {@code @Setup(Level.Trial)}, closed in {@code @TearDown(Level.Trial)}.
 */
public final class Harness implements AutoCloseable {
  public final BenchCluster cluster;
  public final Contender contender;
  public final DataSource ds;
  private Thread sampler;
  private volatile boolean sampling;
  private final AtomicInteger maxFallbackSessions = new AtomicInteger();
  private final AtomicInteger samples = new AtomicInteger();

  private final long startedNanos = System.nanoTime();

  private Harness(Contender contender) {
    this.contender = contender;
    this.cluster = BenchCluster.start();
    log("cluster up");
    DataSource d = null;
    try {
      d = contender.open(cluster);
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
    this.ds = d;
  }

  /** Read benchmarks: reads must run on the replica, every pool full, before anything is measured. */
  public static Harness reads(Contender contender) throws SQLException {
    Harness h = new Harness(contender);
    try {
      String expected = contender == Contender.PRIMARY_POOL ? "primary" : "replica";
      Workloads.awaitReadsOn(h.ds, expected, Duration.ofSeconds(30), contender.name());
      Workloads.warm(h.ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
      Workloads.awaitReadsOn(h.ds, expected, Duration.ofSeconds(30), contender.name());
      h.log("reads on the " + expected + ", pools warm");
      return h;
    } catch (SQLException | RuntimeException e) {
      h.close();
      throw e;
    }
  }

  /** Write benchmarks: every primary connection opened before anything is measured. */
  public static Harness writes(Contender contender) throws SQLException {
    Harness h = new Harness(contender);
    try {
      Workloads.warmWrites(h.ds, Contender.POOL_SIZE);
      h.log("writes warm");
      return h;
    } catch (SQLException | RuntimeException e) {
      h.close();
      throw e;
    }
  }

  /**
   * Case 7: warm on a fresh replica, then pause its replay (real, growing lag) and wait until the
   * contender's reads run on the primary; samples the primary's omnium fallback sessions meanwhile.
   */
  public static Harness stale(Contender contender) throws SQLException {
    Harness h = reads(contender);
    try {
      h.cluster.sandbox().pauseReplay(h.cluster.replica());
      Workloads.awaitReadsOn(h.ds, "primary", Duration.ofSeconds(30), contender.name() + " (replica paused)");
      h.startSampler();
      h.log("replica paused, reads on the primary");
      return h;
    } catch (RuntimeException e) {
      h.close();
      throw e;
    }
  }

  private void startSampler() {
    sampling = true;
    sampler = new Thread(() -> {
      try (Connection c = cluster.control(cluster.primary()); Statement st = c.createStatement()) {
        while (sampling) {
          try (ResultSet rs = st.executeQuery(FALLBACK_SESSIONS_SQL)) {
            rs.next();
            maxFallbackSessions.accumulateAndGet(rs.getInt(1), Math::max);
            samples.incrementAndGet();
          }
          Thread.sleep(20);
        }
      } catch (SQLException | InterruptedException e) {
        // the trial is ending
      }
    }, "bench-fallback-sampler");
    sampler.setDaemon(true);
    sampler.start();
  }

  /** Sessions on the primary that serve omnium's read-only fallback route. */
  public static final String FALLBACK_SESSIONS_SQL = "SELECT count(*) FROM pg_stat_activity WHERE application_name = '"
      + Contender.APP + ":fallback'";

  void log(String what) {
    System.out.printf("[harness] %s %s after %d ms%n", contender, what, (System.nanoTime() - startedNanos) / 1_000_000);
  }

  @Override
  public void close() {
    if (sampler != null) {
      sampling = false;
      try {
        sampler.join(2000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      System.out.println("[stale replica] " + contender + ": at most " + maxFallbackSessions.get()
          + " omnium fallback sessions on the primary in " + samples.get() + " samples (fallbackPoolSize="
          + Contender.FALLBACK_POOL_SIZE + ")");
    }
    try {
      Contender.close(ds);
    } finally {
      cluster.close();
    }
  }
}
