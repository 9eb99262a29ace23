package dev.omnium.sandbox.testkit;

import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * Waits for a condition with a deadline instead of sleeping fixed amounts: tests must not depend
 * on timing, so every wait polls and every poll is bounded.
 */
public final class Poll {
  private static final long PAUSE_MILLIS = 20;

  private Poll() { }

  /**
   * Calls {@code condition} until it returns true; an exception counts as "not yet".
   *
   * @param deadline how long to wait at the most
   * @param what what is awaited, for the failure message
   * @param condition the condition
   * @return how long it took
   * @throws AssertionError when the deadline passes (its cause is the last exception, if any)
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public static Duration until(Duration deadline, String what, Callable<Boolean> condition)
      throws InterruptedException {
    long start = System.nanoTime();
    long end = start + deadline.toNanos();
    Exception last = null;
    while (System.nanoTime() < end) {
      try {
        if (Boolean.TRUE.equals(condition.call())) {
          return Duration.ofNanos(System.nanoTime() - start);
        }
        last = null;
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        last = e;
      }
      Thread.sleep(PAUSE_MILLIS);
    }
    AssertionError failure =
        new AssertionError("timed out after " + deadline + " waiting for " + what);
    if (last != null) {
      failure.initCause(last);
    }
    throw failure;
  }

  /**
   * Sleeps, keeping the interrupt flag (for pacing faults and load, never for waiting on a state).
   *
   * @param millis how long
   */
  public static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
