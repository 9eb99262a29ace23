package dev.omnium.bench;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Case 6: throughput of case 1's read-only transaction with 1, 4 and 16 application threads. The
 * pools hold 16 connections for every contender; client, primary and replica share the machine.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class ScalingBenchmark {
  @Param({"REPLICA_POOL", "OMNIUM_DRIVER", "OMNIUM_DATASOURCE", "PGJDBC_MULTIHOST", "AWS_WRAPPER_SRW"})
  public Contender contender;

  private Harness harness;

  @Setup(Level.Trial)
  public void start() throws SQLException {
    harness = Harness.reads(contender);
  }

  @TearDown(Level.Trial)
  public void stop() {
    harness.close();
  }

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
