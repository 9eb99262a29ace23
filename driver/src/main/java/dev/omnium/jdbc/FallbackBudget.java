package dev.omnium.jdbc;

import java.sql.Connection;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code fallbackPoolSize} as a hard cap per process for one primary database and user: every
 * router of that database and user (driver mode and data sources alike) takes a permit before it
 * lends a fallback connection. The first router sets the size; later ones share it.
 *
 * <p>Waiters are served in the order they came. A waiter may also leave as soon as a replica can
 * serve its unit of work after all ({@link #acquire(long, BooleanSupplier)}): reads that queued
 * for the primary while the replicas were stale then go back to a replica when one is fresh
 * again, instead of waiting for the cap's sessions (and failing after poolTimeout if those are
 * held long).
 */
final class FallbackBudget {
  /** How a wait for a permit ended. */
  enum Outcome { TAKEN, TIMED_OUT, REROUTED }

  /** How often a waiter asks whether a replica serves it now (a few volatile reads). */
  static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private static final Logger log = LoggerFactory.getLogger(FallbackBudget.class);
  private static final Map<Object, FallbackBudget> BUDGETS = new HashMap<>(); // guarded by class

  private final Object key;
  final int size;
  private final ReentrantLock lock = new ReentrantLock();
  /** Signalled when a permit comes back or the first waiter leaves. */
  private final Condition changed = lock.newCondition();
  /** The waiting threads, first come first: only the first may take a free permit. */
  private final ArrayDeque<Thread> queue = new ArrayDeque<>(); // guarded by lock
  private int available; // guarded by lock
  /** Connections holding a permit: a second release of the same connection frees nothing. */
  private final Set<Connection> holders = ConcurrentHashMap.newKeySet();
  private int routers; // guarded by FallbackBudget.class

  private FallbackBudget(Object key, int size) {
    this.key = key;
    this.size = size;
    this.available = size;
  }

  /** The budget of {@code config}'s primary database and user; {@link #leave()} when done. */
  static synchronized FallbackBudget join(OmniumConfig config) {
    FallbackBudget b = BUDGETS.computeIfAbsent(config.fallbackBudgetKey(),
        k -> new FallbackBudget(k, config.fallbackPoolSize()));
    if (b.size != config.fallbackPoolSize()) {
      log.info("omnium: fallbackPoolSize={} of {} is ignored: the process-wide cap of {} set by an"
          + " earlier configuration of the same primary database and user applies",
          config.fallbackPoolSize(), config.applicationName(), b.size);
    }
    b.routers++;
    return b;
  }

  void leave() {
    synchronized (FallbackBudget.class) {
      if (--routers == 0) BUDGETS.remove(key, this);
    }
  }

  /**
   * Waits at most {@code timeoutNanos} for a permit, after the threads that came before. While it
   * waits it asks {@code reroute} (null: never) every {@link #RECHECK_NANOS} and whenever a permit
   * comes back, and leaves without a permit once it says true.
   */
  Outcome acquire(long timeoutNanos, BooleanSupplier reroute) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    Thread me = Thread.currentThread();
    lock.lockInterruptibly();
    try {
      if (queue.isEmpty() && available > 0) {
        available--;
        return Outcome.TAKEN;
      }
      queue.addLast(me);
      try {
        while (true) {
          if (available > 0 && queue.peekFirst() == me) {
            available--;
            return Outcome.TAKEN;
          }
          if (reroute != null && reroute.getAsBoolean()) return Outcome.REROUTED;
          long left = deadline - System.nanoTime();
          if (left <= 0) return Outcome.TIMED_OUT;
          changed.awaitNanos(reroute == null ? left : Math.min(left, RECHECK_NANOS));
        }
      } finally {
        boolean wasFirst = queue.peekFirst() == me;
        queue.remove(me);
        // a first waiter that leaves without the free permit hands it to the next
        if (wasFirst && available > 0 && !queue.isEmpty()) changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Gives back a permit taken by {@link #acquire} that ended without a connection. */
  void cancel() {
    give();
  }

  private void give() {
    lock.lock();
    try {
      available++;
      if (!queue.isEmpty()) changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** The permit now belongs to {@code c}, until {@link #release(Connection)}. */
  void hold(Connection c) {
    holders.add(c);
  }

  void release(Connection c) {
    if (holders.remove(c)) give();
  }

  int inUse() {
    lock.lock();
    try {
      return size - available;
    } finally {
      lock.unlock();
    }
  }

  /** Threads waiting for a permit now. */
  int waiting() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }
}
