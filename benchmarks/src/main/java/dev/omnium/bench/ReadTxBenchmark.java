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
 * Case 1: one read-only transaction in the shape Spring gives it (borrow, setReadOnly(true),
 * setAutoCommit(false), one-row SELECT by primary key, commit, reset, return), one thread, against
 * a real PostgreSQL 18 replica. {@code REPLICA_POOL} is the physical limit.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Threads(1)
public class ReadTxBenchmark {
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
  public long readTx(Ids ids, ClientCpu cpu) throws SQLException {
    cpu.op();
    return Workloads.readTx(harness.ds, ids.next());
  }
}
