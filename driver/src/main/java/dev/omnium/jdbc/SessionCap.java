package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One cap per process on the sessions that the internal pools of every router keep open to one
 * server for one database and user: {@code replicaPoolSize} on each replica, {@code
 * fallbackPoolSize} on the primary. However many routers a JVM makes (one per distinct set of
 * properties: several data sources, per-tenant settings, pgjdbc's own test suite), their pools
 * together never hold more there. The first configuration sets the size; later ones share it, as
 * with {@link FallbackBudget}.
 *
 * <p>A pool's connect takes a slot ({@link CappedSessions}); the slot is free again once the
 * session is closed, whichever way (its pool's eviction, idle timeout, lifetime, shutdown, an
 * abort). When none is free, the connect closes the idle sessions of the other pools of the cap
 * (first of those that lend nothing now), and waits, bounded, for a slot; while a connect waits,
 * a session given back to any pool of the cap is closed rather than kept ({@link #crowded()}), so
 * a busy pool makes room for another one too.
 */
final class SessionCap {
  private static final Logger log = LoggerFactory.getLogger(SessionCap.class);
  private static final Map<Object, SessionCap> CAPS = new HashMap<>(); // guarded by class
  /** How often a waiting connect looks again: sessions close on HikariCP's closer threads. */
  private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final Object key;
  final int size;
  /** pgjdbc's sessions holding a slot; a closed one frees it when next looked at. */
  private final Set<Connection> open = ConcurrentHashMap.newKeySet();
  private final List<Member> members = new CopyOnWriteArrayList<>();
  private int reserved; // guarded by this: connects under way
  private volatile int waiting; // written under this
  private int joined; // guarded by SessionCap.class

  /** A pool of this cap, and what it does when it stops or starts being the only one. */
  private record Member(HikariDataSource pool, Runnable sharingChanged) { }

  private SessionCap(Object key, int size) {
    this.key = key;
    this.size = size;
  }

  /**
   * The cap of {@code key}'s server, database and user, with {@code size} slots unless an earlier
   * configuration set it; {@link #leave()} when done.
   *
   * @param what the setting, for the log line when an earlier size applies
   */
  static synchronized SessionCap join(Object key, int size, String what, String app) {
    SessionCap cap = CAPS.computeIfAbsent(key, k -> new SessionCap(k, size));
    if (cap.size != size) {
      log.info("omnium: {}={} of {} is ignored: the process-wide cap of {} set by an earlier"
          + " configuration of the same server, database and user applies", what, size, app,
          cap.size);
    }
    cap.joined++;
    return cap;
  }

  void leave() {
    synchronized (SessionCap.class) {
      if (--joined == 0) CAPS.remove(key, this);
    }
  }

  /**
   * Adds a pool whose sessions count here; {@code sharingChanged} runs (on the caller's thread)
   * for every pool of the cap when the cap goes from one pool to more, or back.
   */
  void attach(HikariDataSource pool, Runnable sharingChanged) {
    boolean wasAlone = members.size() == 1;
    members.add(new Member(pool, sharingChanged));
    if (wasAlone) sharingChanged();
  }

  void detach(HikariDataSource pool) {
    members.removeIf(m -> m.pool() == pool);
    if (members.size() == 1) sharingChanged();
  }

  private void sharingChanged() {
    for (Member m : members) {
      if (m.sharingChanged() != null) m.sharingChanged().run();
    }
  }

  /** Whether more than one pool counts here (no pool then keeps a session warm). */
  boolean shared() {
    return members.size() > 1;
  }

  /** Whether a connect waits for a slot now: a session given back should be closed instead. */
  boolean crowded() {
    return waiting > 0;
  }

  /**
   * Takes a slot for a connect of {@code requester}'s pool, waiting at most {@code timeoutNanos}
   * and not once {@code giveUp} says so (its router closes). Follow with {@link #opened} or
   * {@link #cancel()}.
   *
   * @return false when no slot came in time
   */
  boolean reserve(HikariDataSource requester, long timeoutNanos, BooleanSupplier giveUp)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    boolean counted = false;
    try {
      while (true) {
        synchronized (this) {
          open.removeIf(SessionCap::closed);
          if (open.size() + reserved < size) {
            reserved++;
            return true;
          }
          if (!counted) {
            counted = true;
            waiting++;
          }
        }
        reclaimIdle(requester);
        long left = deadline - System.nanoTime();
        if (left <= 0 || giveUp.getAsBoolean()) return false;
        LockSupport.parkNanos(this, Math.min(left, RECHECK_NANOS));
        if (Thread.interrupted()) throw new InterruptedException();
      }
    } finally {
      if (counted) {
        synchronized (this) {
          waiting--;
        }
      }
    }
  }

  /** The slot reserved for a connect now belongs to its session {@code c} until it closes. */
  synchronized void opened(Connection c) {
    reserved--;
    open.add(c);
  }

  /** Gives back a slot reserved for a connect that failed. */
  synchronized void cancel() {
    reserved--;
  }

  /** Sessions holding a slot now. */
  synchronized int openSessions() {
    open.removeIf(SessionCap::closed);
    return open.size();
  }

  /**
   * Closes the idle sessions of the other pools of the cap: of those that lend none now, or when
   * none of them has any, of those that do (HikariCP closes a pool's idle sessions on its closer
   * thread, and the ones it lends when they are next borrowed).
   */
  private void reclaimIdle(HikariDataSource requester) {
    if (reclaimIdle(requester, false)) return;
    reclaimIdle(requester, true);
  }

  private boolean reclaimIdle(HikariDataSource requester, boolean alsoBusy) {
    boolean any = false;
    for (Member m : members) {
      if (m.pool() == requester || m.pool().isClosed()) continue;
      HikariPoolMXBean bean = m.pool().getHikariPoolMXBean();
      if (bean != null && bean.getIdleConnections() > 0
          && (alsoBusy || bean.getActiveConnections() == 0)) {
        bean.softEvictConnections();
        any = true;
      }
    }
    return any;
  }

  private static boolean closed(Connection c) {
    try {
      return c.isClosed();
    } catch (SQLException | RuntimeException e) {
      return true;
    }
  }
}
