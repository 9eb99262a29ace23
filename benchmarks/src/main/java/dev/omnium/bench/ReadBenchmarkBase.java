package dev.omnium.bench;

import java.sql.SQLException;
import org.openjdk.jmh.annotations.Param;

/**
 * A read benchmark: every trial warms one read contender on its own cluster and checks that its
 * reads run on the replica ({@code REPLICA_POOL}, HikariCP straight to the replica, is the limit).
 */
public abstract class ReadBenchmarkBase extends HarnessBenchmark {
  @Param({"REPLICA_POOL", "OMNIUM_DRIVER", "OMNIUM_DATASOURCE", "PGJDBC_MULTIHOST", "AWS_WRAPPER_SRW"})
  public Contender contender;

  @Override
  Harness open() throws SQLException {
    return Harness.reads(contender);
  }
}
