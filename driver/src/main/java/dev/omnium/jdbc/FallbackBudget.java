package dev.omnium.jdbc;

import java.sql.Connection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code fallbackPoolSize} as a hard cap per process for one primary database and user: every
 * router of that database and user (driver mode and data sources alike) takes a permit before it
 * lends a fallback connection. The first router sets the size; later ones share it.
 */
final class FallbackBudget {
  private static final Logger log = LoggerFactory.getLogger(FallbackBudget.class);
  private static final Map<Object, FallbackBudget> BUDGETS = new HashMap<>(); // guarded by class

  private final Object key;
  final int size;
  private final Semaphore permits;
  /** Connections holding a permit: a second release of the same connection frees nothing. */
  private final Set<Connection> holders = ConcurrentHashMap.newKeySet();
  private int routers; // guarded by FallbackBudget.class

  private FallbackBudget(Object key, int size) {
    this.key = key;
    this.size = size;
    this.permits = new Semaphore(size, true);
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

  /** Waits at most {@code timeoutNanos} for a permit. */
  boolean acquire(long timeoutNanos) throws InterruptedException {
    return permits.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS);
  }

  /** Gives back a permit taken by {@link #acquire} that ended without a connection. */
  void cancel() {
    permits.release();
  }

  /** The permit now belongs to {@code c}, until {@link #release(Connection)}. */
  void hold(Connection c) {
    holders.add(c);
  }

  void release(Connection c) {
    if (holders.remove(c)) permits.release();
  }

  int inUse() {
    return size - permits.availablePermits();
  }
}
