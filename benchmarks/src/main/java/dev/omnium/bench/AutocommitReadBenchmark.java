package dev.omnium.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Case 3: a read-only autocommit statement through a PreparedStatement that is reused: the
 * connection is borrowed once per trial, set read-only, and the statement prepared once; each
 * operation binds a key, executes and reads the row. omnium routes every such statement (and keeps
 * its binding while the replica stays fresh).
 */
public class AutocommitReadBenchmark extends ReadBenchmarkBase {

  /** One held read-only connection and its reused statement per thread. */
  @State(Scope.Thread)
  public static class Session {
    Connection connection;
    PreparedStatement statement;

    @Setup(Level.Trial)
    public void open(AutocommitReadBenchmark bench) throws SQLException {
      connection = bench.harness.ds.getConnection();
      connection.setReadOnly(true);
      statement = connection.prepareStatement(BenchCluster.READ_SQL);
    }

    @TearDown(Level.Trial)
    public void close() throws SQLException {
      try {
        statement.close();
      } finally {
        connection.close();
      }
    }
  }

  @Benchmark
  public long autocommitRead(Session session, Ids ids, ClientCpu cpu) throws SQLException {
    cpu.op();
    return Workloads.autocommitRead(session.statement, ids.next());
  }
}
