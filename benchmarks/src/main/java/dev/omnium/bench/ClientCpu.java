package dev.omnium.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * CPU time (user + system) the benchmark thread itself spends, and the operations it ran: their
 * ratio is the client's share of an operation without the time spent waiting for the servers. On a
 * shared 2-core machine it is much less sensitive to the servers' and other processes' load than
 * wall time, so it shows what a driver layer costs. JMH sums both counters over the measurement
 * iterations (secondary metrics {@code clientCpuNanos} and {@code clientOps}); the report divides them.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class ClientCpu {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** Thread CPU nanoseconds in the iteration. */
  public long clientCpuNanos;
  /** Operations in the iteration. */
  public long clientOps;

  private long startCpuNanos;

  @Setup(Level.Iteration)
  public void begin() {
    clientOps = 0;
    clientCpuNanos = 0;
    startCpuNanos = THREADS.getCurrentThreadCpuTime();
  }

  /** Counts one operation (called by the benchmark method; a field increment). */
  public void op() {
    clientOps++;
  }

  @TearDown(Level.Iteration)
  public void end() {
    clientCpuNanos = THREADS.getCurrentThreadCpuTime() - startCpuNanos;
  }
}
