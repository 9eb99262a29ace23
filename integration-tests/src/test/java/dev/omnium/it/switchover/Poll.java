package dev.omnium.it.switchover;

import java.time.Duration;
import java.util.concurrent.Callable;

/** Waits for a condition with a deadline instead of sleeping fixed amounts. */
final class Poll {
  private Poll() { }

  /** Returns how long it took; fails with {@code what} when the deadline passes. */
  static Duration until(Duration deadline, String what, Callable<Boolean> condition)
      throws Exception {
    long start = System.nanoTime();
    long end = start + deadline.toNanos();
    Exception last = null;
    while (System.nanoTime() < end) {
      try {
        if (Boolean.TRUE.equals(condition.call())) {
          return Duration.ofNanos(System.nanoTime() - start);
        }
        last = null;
      } catch (Exception e) {
        last = e;
      }
      Thread.sleep(20);
    }
    AssertionError failure =
        new AssertionError("timed out after " + deadline + " waiting for " + what);
    if (last != null) failure.initCause(last);
    throw failure;
  }
}
