package dev.omnium.sandbox;

import java.time.Duration;

/** Polls a condition until it holds or a deadline passes: the sandbox never sleeps a fixed time. */
final class Poll {

  /** A condition that may fail with an exception, which counts as "not yet". */
  @FunctionalInterface
  interface Check {
    boolean test() throws Exception;
  }

  private Poll() {}

  static void until(Duration timeout, String what, Check check) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = 10;
    Exception last = null;
    while (true) {
      try {
        if (check.test()) {
          return;
        }
        last = null;
      } catch (Exception e) {
        last = e;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new PgSandboxException("timed out after " + timeout.toMillis() + " ms waiting for "
            + what + (last == null ? "" : " (last error: " + last + ")"), last);
      }
      try {
        Thread.sleep(pause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new PgSandboxException("interrupted while waiting for " + what, e);
      }
      pause = Math.min(100, pause * 2);
    }
  }
}
