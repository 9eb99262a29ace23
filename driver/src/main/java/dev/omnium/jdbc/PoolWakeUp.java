package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/**
 * Wakes a HikariCP pool's connection adder from its back-off sleep. After failed attempts HikariCP
 * waits longer and longer between new tries (up to 5 s); when a new primary is known (a promotion
 * was seen) that sleep is pure delay: readers would wait for the fallback route, holding the
 * application's connections, while writers already reach the new primary. The adder ends its
 * attempts when interrupted in its sleep, and the next borrower starts a fresh one at once.
 */
final class PoolWakeUp {
  private PoolWakeUp() { }

  /**
   * Rare (a role change): walks the threads. Interrupts only an adder asleep in HikariCP's
   * back-off, never a connect: a connect with a login timeout waits for pgjdbc's connect thread,
   * timed too, and an interrupt there fails it (and, the flag kept, every later attempt of that
   * adder).
   */
  static void wake(HikariDataSource pool) {
    String name = pool.getPoolName() + ":connection-adder";
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (name.equals(t.getName()) && t.getState() == Thread.State.TIMED_WAITING
          && inBackOff(t.getStackTrace())) {
        t.interrupt();
      }
    }
  }

  /** Sleeping in HikariCP's {@code UtilityElf.quietlySleep}, as its adder does between tries. */
  static boolean inBackOff(StackTraceElement[] stack) {
    for (int i = 0; i < Math.min(stack.length, 4); i++) {
      if (stack[i].getMethodName().equals("quietlySleep")) return true;
    }
    return false;
  }
}
