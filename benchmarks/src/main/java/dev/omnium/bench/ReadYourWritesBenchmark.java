package dev.omnium.bench;

import dev.omnium.jdbc.OmniumDataSource;
import java.sql.SQLException;
import java.time.Duration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Read-your-writes: what {@code readYourWrites=thread} costs against {@code off}, with
 * {@code OmniumDataSource}. A write transaction pays a clock reading and, at most once per 10 ms,
 * the wake-up of the primary's sampler (no statement); a read inside the TTL of its thread's write
 * pays a
 * ThreadLocal read and a comparison with the replica's sampled replay position (the replica has
 * replayed the write: the iteration waits for that); a read by a thread with no remembered write
 * pays nothing.
 */
public class ReadYourWritesBenchmark extends SuiteSettings {
  @Param({"off", "thread"})
  public String readYourWrites;

  private BenchCluster cluster;
  /** Used for writes, and for reads inside the TTL of this thread's last write. */
  private OmniumDataSource writer;
  /** Another router over the same servers: it has seen no write from any thread. */
  private OmniumDataSource fresh;
  private int counter;
  private int[] ids;

  @Setup(Level.Trial)
  public void start() throws SQLException {
    cluster = BenchCluster.start();
    String url = Contender.omniumUrl(cluster.primary().hostPort(), cluster.replica().hostPort(), cluster.database())
        + "&readYourWrites=" + readYourWrites + "&readYourWritesTtl=60s";
    writer = new OmniumDataSource(url);
    writer.setUser(cluster.sandbox().user());
    fresh = new OmniumDataSource(url);
    fresh.setUser(cluster.sandbox().user());
    Workloads.awaitReadsOn(writer, "replica", Duration.ofSeconds(30), "ryw " + readYourWrites);
    Workloads.awaitReadsOn(fresh, "replica", Duration.ofSeconds(30), "ryw " + readYourWrites + " (no writes)");
    Workloads.warmWrites(writer, Contender.POOL_SIZE);
    ids = Workloads.ids(42, 1024);
  }

  /** Each iteration starts with a write of this thread that the replica has already replayed. */
  @Setup(Level.Iteration)
  public void writeAndLetTheReplicaCatchUp() throws SQLException {
    Workloads.writeTx(writer, counter++);
    cluster.sandbox().awaitCaughtUp(cluster.replica());
    Workloads.awaitReadsOn(writer, "replica", Duration.ofSeconds(30), "ryw " + readYourWrites + " inside the TTL");
  }

  @TearDown(Level.Trial)
  public void stop() {
    Contender.close(writer);
    Contender.close(fresh);
    cluster.close();
  }

  @Benchmark
  public int writeTx() throws SQLException {
    return Workloads.writeTx(writer, counter++);
  }

  @Benchmark
  public long readInsideTtl() throws SQLException {
    return Workloads.readTx(writer, ids[counter++ & 1023]);
  }

  @Benchmark
  public long readWithoutWrites() throws SQLException {
    return Workloads.readTx(fresh, ids[counter++ & 1023]);
  }
}
