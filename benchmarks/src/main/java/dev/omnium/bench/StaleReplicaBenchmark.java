package dev.omnium.bench;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Threads;

/**
 * Case 7: case 1 while the replica's replay is paused (its lag grows past maxAge), so omnium sends
 * read-only transactions to its capped fallback pool on the primary. The limit is HikariCP straight
 * to the primary with all 16 connections; omnium may use only fallbackPoolSize (4) primary sessions
 * for reads, which can cost throughput when more threads than that want to read at once and the
 * primary has cores to spare: that cap is the point (a stale replica never floods the primary).
 */
public class StaleReplicaBenchmark extends HarnessBenchmark {
  @Param({"PRIMARY_POOL", "OMNIUM_DRIVER", "OMNIUM_DATASOURCE"})
  public Contender contender;

  @Override
  Harness open() throws SQLException {
    return Harness.stale(contender);
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Threads(1)
  public long staleReadTx(Ids ids, ClientCpu cpu) throws SQLException {
    cpu.op();
    return Workloads.readTx(harness.ds, ids.next());
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  @Threads(16)
  public long staleThreads16(Ids ids) throws SQLException {
    return Workloads.readTx(harness.ds, ids.next());
  }
}
