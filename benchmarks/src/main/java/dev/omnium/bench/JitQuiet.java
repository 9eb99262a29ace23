package dev.omnium.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * The end of a warm-up: the JIT compiled nothing for {@code quietMillis}. A fixed number of warm-up
 * rounds ends at a different point of compilation on every machine; on a small one the compiler
 * threads still take turns with the client and the servers for seconds after it, and the contender
 * with the most code to compile pays for the rounds measured meanwhile. Bounded: after
 * {@code limitMillis} the warm-up ends anyway, and says so.
 */
final class JitQuiet {
  private final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
  private final long quietNanos;
  private final long limitNanos;
  private final long started = System.nanoTime();
  private long compiledMillis = -1;
  private long since = started;

  JitQuiet(long quietMillis, long limitMillis) {
    this.quietNanos = quietMillis * 1_000_000L;
    this.limitNanos = limitMillis * 1_000_000L;
  }

  /** True once nothing was compiled for the quiet time (always, when off or not measurable). */
  boolean quiet() {
    if (quietNanos <= 0 || jit == null || !jit.isCompilationTimeMonitoringSupported()) return true;
    long now = System.nanoTime();
    long compiled = jit.getTotalCompilationTime();
    if (compiled != compiledMillis) {
      compiledMillis = compiled;
      since = now;
    }
    return now - since >= quietNanos;
  }

  /** True when the warm-up has run for its limit. */
  boolean timedOut() {
    return quietNanos > 0 && System.nanoTime() - started >= limitNanos;
  }

  double seconds() {
    return (System.nanoTime() - started) / 1e9;
  }
}
