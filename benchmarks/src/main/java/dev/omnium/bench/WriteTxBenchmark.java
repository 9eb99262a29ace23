package dev.omnium.bench;

import java.sql.SQLException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;

/**
 * Case 2: a write transaction (borrow, setAutoCommit(false), one INSERT, commit, reset, return) on
 * the primary: HikariCP straight to the primary (the limit) against omnium in both modes.
 */
public class WriteTxBenchmark extends HarnessBenchmark {
  @Param({"PRIMARY_POOL", "OMNIUM_DRIVER", "OMNIUM_DATASOURCE"})
  public Contender contender;

  private int counter;

  @Override
  Harness open() throws SQLException {
    return Harness.writes(contender);
  }

  @Benchmark
  public int writeTx(ClientCpu cpu) throws SQLException {
    cpu.op();
    return Workloads.writeTx(harness.ds, counter++);
  }
}
