package dev.omnium.bench;

import java.sql.SQLException;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A benchmark whose every trial runs on its own {@link Harness}: a fresh cluster and one
 * contender's data source, opened and checked before anything is measured, closed after.
 */
public abstract class HarnessBenchmark extends SuiteSettings {
  Harness harness;

  /** This benchmark's harness for its contender ({@code Harness.reads}, {@code writes}, ...). */
  abstract Harness open() throws SQLException;

  @Setup(Level.Trial)
  public void start() throws SQLException {
    harness = open();
  }

  @TearDown(Level.Trial)
  public void stop() {
    harness.close();
  }
}
