package dev.omnium.jdbc;

import dev.omnium.bench.BenchCluster;
import dev.omnium.bench.Contender;
import dev.omnium.bench.SuiteSettings;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Case 4: the routing decision alone, no I/O on the measured path. It lives in omnium's package
 * (a different jar, the same package on the class path) because the decision is package-private.
 *
 * <ul>
 *   <li>{@code NANO_TIME}: {@code System.nanoTime()} alone, the clock read every decision includes
 *       (its cost depends on the machine's clock source).</li>
 *   <li>{@code IS_FRESH}: {@code LagWatcher.isFresh(System.nanoTime(), maxAge)} on a watcher that was
 *       never started and holds one recorded measurement: the per-replica check.</li>
 *   <li>{@code PICK_1_REPLICA} / {@code PICK_2_REPLICAS}: the real {@code Router.pickReplica} of a live
 *       {@link OmniumDataSource} on the sandbox (its watchers keep probing in the background), with one
 *       replica, or the same replica listed twice under two names (127.0.0.1 and localhost), which
 *       exercises the least-loaded choice and the tie rotation.</li>
 * </ul>
 * Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes allocated per decision.
 */
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RoutingDecisionBenchmark extends SuiteSettings {
  public enum Decision { NANO_TIME, IS_FRESH, PICK_1_REPLICA, PICK_2_REPLICAS }

  @Param({"NANO_TIME", "IS_FRESH", "PICK_1_REPLICA", "PICK_2_REPLICAS"})
  public Decision decision;

  private LagWatcher watcher;
  private long maxAgeNanos;
  /** A clock reading for {@link #decideClockGiven()}: a non-final field, so it is loaded every call. */
  private long now;
  private Router router;
  private OmniumDataSource dataSource;
  private BenchCluster cluster;

  @Setup(Level.Trial)
  public void start() throws SQLException {
    maxAgeNanos = Duration.ofSeconds(1).toNanos();
    now = System.nanoTime();
    if (decision == Decision.NANO_TIME) return;
    if (decision == Decision.IS_FRESH) {
      watcher = new LagWatcher("127.0.0.1:5432", null, "replica_heartbeat", Duration.ofMillis(200),
          "omnium-lag-bench-unstarted");
      watcher.record(System.nanoTime(), 0.050);
      // A watcher fed this way stays fresh for about a day of benchmarking.
      maxAgeNanos = TimeUnit.DAYS.toNanos(1);
      if (!watcher.isFresh(System.nanoTime(), maxAgeNanos)) throw new IllegalStateException("watcher not fresh");
      return;
    }
    cluster = BenchCluster.start();
    String replicas = "127.0.0.1:" + cluster.replica().port()
        + (decision == Decision.PICK_2_REPLICAS ? ",localhost:" + cluster.replica().port() : "");
    String url = "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?replica=" + replicas + "&maxAge=" + Contender.MAX_AGE + "&heartbeatInterval="
        + Contender.HEARTBEAT_INTERVAL + "&applicationName=bench-routing&replicaPoolSize=2&primaryPoolSize=1";
    dataSource = new OmniumDataSource(url);
    dataSource.setUser(cluster.user());
    try (OmniumConnection c = dataSource.getConnection()) {
      router = c.router(); // the data source logged in once (its proof), the handle binds nothing
    }
    maxAgeNanos = router.defaultMaxAgeNanos;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    int expected = decision == Decision.PICK_2_REPLICAS ? 2 : 1;
    while (freshCount() < expected) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("replicas never fresh: " + router.getReplicaStates());
      sleep();
    }
    // A reading from a moment the replicas were fresh; the watchers only move their beat forward, so it stays fresh.
    now = System.nanoTime();
  }

  private int freshCount() {
    int n = 0;
    long now = System.nanoTime();
    for (ReplicaEndpoint r : router.replicaEndpoints()) {
      if (r.watcher.isFresh(now, maxAgeNanos)) n++;
    }
    return n;
  }

  private static void sleep() {
    try {
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @TearDown(Level.Trial)
  public void stop() {
    if (dataSource != null) dataSource.close();
    if (cluster != null) cluster.close();
  }

  /**
   * The decision as the driver takes it, clock read included. Returns a long so nothing is boxed;
   * the branch on the parameter costs every variant the same.
   */
  @Benchmark
  public long decide() {
    switch (decision) {
      case NANO_TIME:
        return System.nanoTime();
      case IS_FRESH:
        return watcher.isFresh(System.nanoTime(), maxAgeNanos) ? 1 : 0;
      default:
        return router.pickReplica(System.nanoTime(), maxAgeNanos) != null ? 1 : 0;
    }
  }

  /**
   * The decision's own logic with the clock reading given (taken once at setup and held in a field
   * the JIT cannot fold), i.e. {@link #decide()} minus {@code System.nanoTime()}, whose cost depends
   * on the machine's clock source (on a VM with kvm-clock it can exceed the decision itself).
   */
  @Benchmark
  public long decideClockGiven() {
    switch (decision) {
      case NANO_TIME:
        return now;
      case IS_FRESH:
        return watcher.isFresh(now, maxAgeNanos) ? 1 : 0;
      default:
        return router.pickReplica(now, maxAgeNanos) != null ? 1 : 0;
    }
  }
}
