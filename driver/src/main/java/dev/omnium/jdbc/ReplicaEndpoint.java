package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replica of a router: its connection pool, its lag watcher (shared with the other routers of
 * the process that watch the same server, see {@link BackgroundSessions}) and how many of its
 * connections are lent out. The pool grows with demand up to its size, counts against the
 * process-wide {@link SessionCap} of the server, and keeps one session warm while the server is a
 * standby and no other pool shares the cap; idle sessions beyond that close after
 * {@code poolIdleTimeout}.
 */
final class ReplicaEndpoint {
  private static final Logger log = LoggerFactory.getLogger(ReplicaEndpoint.class);

  final String name;
  /** The address's watcher: its first server's (the only one, but behind a reader endpoint). */
  final LagWatcher watcher;
  /** Every server the address reaches, each with its watcher; null when not asked. */
  final ServerWatchers servers;
  final HikariDataSource pool;
  /**
   * Connections lent, for the least-loaded pick among several replicas; not kept with a single
   * replica, where nothing reads it (two atomic updates per read that every core would share).
   */
  private final AtomicInteger inUse = new AtomicInteger();
  private final boolean countsLoad;
  /**
   * Lent connections, so a black-holed replica's in-flight reads can be cut loose
   * (docs/routing-contract.md, rule 9).
   */
  private final LentSessions lent;
  /** The process-wide cap on this server's pooled sessions; null when not capped. */
  private final SessionCap cap;
  private final Runnable onPromoted;
  /** The watcher last saw a standby there: only then is a session kept warm. */
  private volatile boolean standby;

  /**
   * An endpoint alone on its watcher, which tells it of role changes.
   *
   * @param pool created with no idle minimum: it keeps a session only once the watcher saw a
   *     standby, so a listed node that is the primary gets no replica sessions
   * @param size the pool's maximum size
   */
  ReplicaEndpoint(String name, LagWatcher watcher, HikariDataSource pool, int size) {
    this(name, watcher, pool, size, true, null);
  }

  /**
   * An endpoint alone on its watcher, which tells it of role changes.
   *
   * @param countsLoad whether {@link #inUse()} is kept (the router has more than one replica)
   * @param onPromoted also run when the server turns out to be a primary (the router's part)
   */
  ReplicaEndpoint(String name, LagWatcher watcher, HikariDataSource pool, int size,
                  boolean countsLoad, Runnable onPromoted) {
    this(name, watcher, pool, size, countsLoad, onPromoted, null, null);
    watcher.onRoleChange(this::serverIsPrimary, this::serverIsStandby);
  }

  /**
   * A router's endpoint: its (shared) watcher's role changes reach it through
   * {@link #serverIsPrimary()} and {@link #serverIsStandby()}.
   *
   * @param cap the process-wide cap the pool's sessions count against, or null
   * @param servers the servers the address reaches, or null (not asked: one server)
   */
  ReplicaEndpoint(String name, LagWatcher watcher, HikariDataSource pool, int size,
                  boolean countsLoad, Runnable onPromoted, SessionCap cap,
                  ServerWatchers servers) {
    this.name = name;
    this.servers = servers;
    this.countsLoad = countsLoad;
    this.watcher = watcher;
    this.pool = pool;
    this.lent = new LentSessions(size);
    this.onPromoted = onPromoted;
    this.cap = cap;
    if (cap != null) cap.attach(pool, this::keepWarm);
  }

  /** The server is a primary: keep no replica session open on it (they are closed on return). */
  void serverIsPrimary() {
    standby = false;
    pool.setMinimumIdle(0);
    HikariPoolMXBean bean = pool.getHikariPoolMXBean();
    if (bean != null) bean.softEvictConnections();
    if (onPromoted != null) onPromoted.run();
  }

  /** The server is a standby: keep a session warm (HikariCP opens it) unless the cap is shared. */
  void serverIsStandby() {
    standby = true;
    keepWarm();
  }

  /**
   * One idle session kept while the server is a standby and this pool is the only one of its cap
   * (the first read after an idle period then opens nothing); none otherwise: with several pools
   * on one server, idle sessions would only take each other's slots.
   */
  private void keepWarm() {
    pool.setMinimumIdle(standby && (cap == null || !cap.shared()) ? 1 : 0);
  }

  /** Closes the pool (its router closes) and leaves the cap. */
  void close() {
    if (cap != null) cap.detach(pool);
    pool.close();
    if (cap != null) cap.leave();
  }

  /** Connections lent now; 0 when not counted (one replica). */
  int inUse() {
    return inUse.get();
  }

  /**
   * Whether reads may come here: its server is fresh enough for {@code maxAgeNanos} and has
   * replayed {@code minLsn} (0: any); behind a reader endpoint, any of its servers.
   */
  boolean isFresh(long nowNanos, long maxAgeNanos, long minLsn) {
    ServerWatchers s = servers;
    if (s == null) return fresh(watcher, nowNanos, maxAgeNanos, minLsn);
    for (LagWatcher w : s.all()) { // all()[0] is this address's watcher
      if (fresh(w, nowNanos, maxAgeNanos, minLsn)) return true;
    }
    s.noneWasFresh(); // the address's watcher looks for another server only then
    return false;
  }

  /** Like {@link #isFresh}, for the server the session {@code rs} reached. */
  boolean isFresh(ReplicaSessionBase rs, long nowNanos, long maxAgeNanos, long minLsn) {
    return fresh(serverOf(rs), nowNanos, maxAgeNanos, minLsn);
  }

  private LagWatcher serverOf(ReplicaSessionBase rs) {
    LagWatcher w = rs == null ? null : rs.server;
    return w == null ? watcher : w;
  }

  private static boolean fresh(LagWatcher w, long nowNanos, long maxAgeNanos, long minLsn) {
    return w.isFresh(nowNanos, maxAgeNanos)
        && (minLsn == 0 || Long.compareUnsigned(w.replayLsn(), minLsn) >= 0);
  }

  /** A connection whatever its server's freshness (tests); see the other {@code borrow}. */
  Connection borrow() throws SQLException {
    return borrow(0, Long.MAX_VALUE, 0);
  }

  /**
   * A connection of this replica, or null when its session reports the server as a primary
   * (in_hot_standby=off, PostgreSQL 14+): a read never runs on a primary through this pool.
   * Behind a reader endpoint, only a session whose own server is fresh enough ({@link #isFresh}):
   * one on a server that is not is closed (the pool opens another, which may reach another
   * server), a few times, then null.
   */
  Connection borrow(long nowNanos, long maxAgeNanos, long minLsn) throws SQLException {
    ServerWatchers s = servers;
    boolean several = s != null && s.several();
    for (int tries = several ? 4 : 1; tries > 0; tries--) {
      Connection c = pool.getConnection();
      // the pool's proxy holds the session wrapper itself: one cheap unwrap, no chain to pgjdbc
      ReplicaSessionBase rs = Binding.replicaSession(c);
      LagWatcher server = serverOf(rs);
      boolean reported = rs != null ? rs.reportsPrimary() : RoleSignal.reportsPrimary(c);
      // Also when another session reported the promotion since this replica was picked.
      if (reported || server.state() == LagWatcher.State.NOT_IN_RECOVERY) {
        Pools.release(pool, c, true);
        if (reported) promoted();
        if (several && !reported) continue;
        return null;
      }
      if (several && maxAgeNanos != Long.MAX_VALUE
          && !fresh(server, nowNanos, maxAgeNanos, minLsn)) {
        Pools.release(pool, c, true);
        continue;
      }
      if (countsLoad) inUse.incrementAndGet();
      lent.add(c);
      return c;
    }
    return null;
  }

  /**
   * An answer came back on a lent session. PostgreSQL tells a session of a promotion only with the
   * answer to its next command (ReportChangedGUCOptions runs just before ReadyForQuery; an idle
   * session hears nothing): the first such answer on any session of this pool stops every later
   * borrow at once, instead of when that read ends. Hot path: one look-up in pgjdbc's map of
   * reported parameters, no round trip.
   */
  void answered(Connection c) {
    if (RoleSignal.reportsPrimary(c)) promoted();
  }

  /** Like {@link #answered(Connection)} for a bound session: its wrapper's live settings. */
  void answered(Binding b) {
    if (b.reportsPrimary()) promoted();
  }

  /** A session of this server reported it a primary: this pool and those of other routers. */
  private void promoted() {
    watcher.noticePromoted();
    ReplicasByHost.promoted(name);
  }

  /**
   * The watcher's own probe timed out: the server does not answer (frozen, black-holed). Reads
   * waiting on it would wait for their socket timeout; aborting their sockets now makes them fail
   * with a lost connection, which the first statement of a read-only unit of work retries on the
   * fallback route.
   */
  void abortLent() {
    int n = 0;
    for (Connection c : lent.snapshot()) {
      try {
        c.abort(Runnable::run);
        n++;
      } catch (SQLException | RuntimeException ignored) {
        // already gone
      }
    }
    if (n > 0) log.warn("omnium: replica {} does not answer: aborted {} connection(s) in use",
        name, n);
  }

  /**
   * Returns a connection to the pool, or evicts it when the server ended its session;
   * {@code session} is pgjdbc's connection under it (asked for the role without an unwrap).
   */
  void release(Connection c, Connection session, boolean dead) {
    release(c, null, session, dead);
  }

  /** Like {@link #release(Connection, Connection, boolean)}; {@code rs} the session's wrapper. */
  void release(Connection c, ReplicaSessionBase rs, Connection session, boolean dead) {
    if (countsLoad) inUse.decrementAndGet();
    lent.remove(c);
    // The server reports a promotion with the first answer after it: notice it now.
    boolean primary = !dead
        && (rs != null ? rs.reportsPrimary() : RoleSignal.reportsPrimary(session));
    // a connect of the process waits for a slot of this server's cap: make room
    SessionCap capped = cap;
    Pools.release(pool, c, dead || primary || (capped != null && capped.crowded()));
    if (primary) promoted();
  }
}
