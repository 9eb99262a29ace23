package dev.omnium.bench;

import java.sql.SQLException;
import org.openjdk.jmh.annotations.Benchmark;

/**
 * Case 1: one read-only transaction in the shape Spring gives it (borrow, setReadOnly(true),
 * setAutoCommit(false), one-row SELECT by primary key, commit, reset, return), one thread, against
 * a real PostgreSQL 18 replica. {@code REPLICA_POOL} is the physical limit.
 */
public class ReadTxBenchmark extends ReadBenchmarkBase {
  @Benchmark
  public long readTx(Ids ids, ClientCpu cpu) throws SQLException {
    cpu.op();
    return Workloads.readTx(harness.ds, ids.next());
  }
}
