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
 * Case 2: a write transaction (borrow, setAutoCommit(false), one INSERT, commit, reset, return) on
 * the primary: HikariCP straight to the primary (the limit) against omnium in both modes.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Threads(1)
public class WriteTxBenchmark {
  @Param({"PRIMARY_POOL", "OMNIUM_DRIVER", "OMNIUM_DATASOURCE"})
  public Contender contender;

  private Harness harness;
  private int counter;

  @Setup(Level.Trial)
  public void start() throws SQLException {
    harness = Harness.writes(contender);
  }

  @TearDown(Level.Trial)
  public void stop() {
    harness.close();
  }

  @Benchmark
  public int writeTx(ClientCpu cpu) throws SQLException {
    cpu.op();
    return Workloads.writeTx(harness.ds, counter++);
  }
}
