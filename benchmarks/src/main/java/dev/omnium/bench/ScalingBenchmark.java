package dev.omnium.bench;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;

/**
 * Case 6: throughput of case 1's read-only transaction with 1, 4 and 16 application threads. The
 * pools hold 16 connections for every contender; client, primary and replica share the machine.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class ScalingBenchmark extends ReadBenchmarkBase {
  @Benchmark
  @Threads(1)
  public long threads01(Ids ids) throws SQLException {
    return Workloads.readTx(harness.ds, ids.next());
  }

  @Benchmark
  @Threads(4)
  public long threads04(Ids ids) throws SQLException {
    return Workloads.readTx(harness.ds, ids.next());
  }

  @Benchmark
  @Threads(16)
  public long threads16(Ids ids) throws SQLException {
    return Workloads.readTx(harness.ds, ids.next());
  }
}
