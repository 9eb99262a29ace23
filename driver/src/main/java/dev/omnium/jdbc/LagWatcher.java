package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Measures one replica's lag on a dedicated connection and thread, with the client's monotonic
 * clock only.
 *
 * <p>The whole measurement is one volatile long, {@code beatNanos}: a local {@link
 * System#nanoTime()} before which every commit on the primary is visible on the replica. Each
 * probe reads the replica's replay position and looks it up in the router's {@link WalTimeline}
 * (the primary's insert position sampled with client timestamps): the latest sample at or below
 * the replay position gives {@code beatNanos}. Effective lag {@code now - beatNanos} is therefore
 * an upper bound on the replica's staleness whatever the servers' clocks say; no server clock is
 * compared with another. The probe still reads the heartbeat row: it keeps WAL moving on an idle
 * database (so the bound stays tight) and tells a missing table or writer apart. The replica's
 * clock is read only to estimate its offset for reports ({@link ClockOffset}).
 */
final class LagWatcher extends IntervalSession {
  private static final Logger log = LoggerFactory.getLogger(LagWatcher.class);

  /** No usable measurement: effective lag is infinite and reads go elsewhere. */
  static final long UNKNOWN = Long.MIN_VALUE;
  /** How far ahead of the clock {@code stalledAfterNanos} is while no probe is in flight (73 y). */
  private static final long NO_PROBE_NANOS = Long.MAX_VALUE / 4;

  /** What the watcher last learned; logged once per change, never once per query. */
  enum State {
    STARTING, OK, NO_HEARTBEAT_TABLE, NO_HEARTBEAT_ROW, BAD_HEARTBEAT_TABLE, UNREACHABLE,
    NOT_IN_RECOVERY,
    /** 42501: the watcher's user may not read the heartbeat table. */
    PERMISSION_DENIED,
    /** 42601: the configured table name is not valid SQL unqualified (a reserved word). */
    BAD_TABLE_NAME,
    /** 40001: replay cancelled the watcher's own probe; the session usually survives. */
    RECOVERY_CONFLICT,
    /** Another system identifier than the primary's: a standby of another cluster. */
    FOREIGN_CLUSTER,
    /** This cluster, not the primary's timeline: left on an abandoned one after a failover. */
    DIVERGED_TIMELINE,
    /** Its identity or the primary's could not be read (a revoked function): never fresh. */
    IDENTITY_UNKNOWN
  }

  private final String name;
  private final String query;
  private final String table;
  private final long stallNanos;
  private final WalTimeline timeline;
  private final ClockOffset clockOffset = new ClockOffset();

  private volatile long beatNanos = UNKNOWN;
  /** Whether a probe is in flight. */
  private volatile boolean probing;
  /**
   * When the probe in flight counts as stalled (a probe that hangs marks the replica unhealthy):
   * its start plus {@code stallNanos}; while none is in flight, decades ahead. {@link #isFresh}
   * compares the clock with it alone, so whether a probe is in flight takes no branch on the read
   * path: one is, for a moment of every interval, too rarely for the JIT's profile to see, and a
   * branch compiled as never taken deoptimized the whole compiled read path each time a read met
   * a probe in flight.
   */
  private volatile long stalledAfterNanos = System.nanoTime() + NO_PROBE_NANOS;
  private volatile long replayLsn; // 0: unknown (compares below every real position)
  private volatile State state = State.STARTING;
  private volatile String lastError;
  /** Evaluated after every probe: one per router that holds this watcher. */
  private final List<LagAlert> alerts = new CopyOnWriteArrayList<>();
  private Runnable onTimeout;
  /** This process writes the heartbeat too: a missing table at first start is expected, briefly. */
  private boolean writerHere;
  private long quietUntilNanos;
  private boolean quiet;
  /** Role changes seen by the probe or reported by a session (RoleSignal): see onRoleChange. */
  private Runnable onPromoted;
  private Runnable onStandby;
  /** When a session last reported the server as a primary; older probes are not recorded. */
  private volatile long promotedNoticedNanos;
  /** The primary's identity (its sampler's); null: not checked. Set before {@link #start()}. */
  private Supplier<ServerIdentity> primaryIdentity;
  /** This server's identity, read once per session (watcher thread only, as the two below). */
  private ServerIdentity identity;
  private ServerIdentity judgedAgainst;
  private ServerIdentity.Verdict verdict;
  /**
   * The servers its address reaches ({@link ServerWatchers}), null before the router sets them;
   * and the one server this watcher measures there, null until its first session reached one.
   */
  private ServerWatchers servers;
  private volatile ServerKey server;

  LagWatcher(String name, PgConnector connector, String heartbeatTable, Duration interval,
      String threadName) {
    this(name, connector, heartbeatTable, interval, threadName, new WalTimeline(64));
  }

  /** @param timeline the primary's WAL positions in client time, shared by a router's watchers */
  LagWatcher(String name, PgConnector connector, String heartbeatTable, Duration interval,
      String threadName, WalTimeline timeline) {
    super(connector, interval, threadName, 200);
    this.name = name;
    this.timeline = timeline;
    this.table = heartbeatTable;
    this.query = "SELECT pg_is_in_recovery(), extract(epoch FROM now() - beat_at)::float8, "
        + "pg_last_wal_replay_lsn()::text, extract(epoch FROM clock_timestamp())::float8 FROM "
        + heartbeatTable + " WHERE id = 1";
    // A healthy probe takes milliseconds; one that takes two intervals means a frozen or
    // black-holed server.
    this.stallNanos = Math.max(2 * intervalNanos(), TimeUnit.MILLISECONDS.toNanos(1000));
  }

  /** An alert evaluated after every probe (a router's; the watcher may serve several). */
  void alertWith(LagAlert alert) {
    alerts.add(alert);
  }

  void removeAlert(LagAlert alert) {
    alerts.remove(alert);
  }

  /**
   * Set before {@link #start()}: the primary's identity, which this server must share (system
   * identifier and timeline) before its lag counts (routing contract, rule 13).
   */
  void judgeAgainst(Supplier<ServerIdentity> primary) {
    this.primaryIdentity = primary;
  }

  /**
   * Set before {@link #start()}: run when a probe times out (the server does not answer at all).
   */
  void onTimeout(Runnable action) {
    this.onTimeout = action;
  }

  /**
   * Set before {@link #start()}: this process runs a heartbeat writer, so a table or row missing at
   * the first start is the writer's next step, not a problem: logged at INFO for a grace period.
   */
  void expectWriter(boolean writer) {
    this.writerHere = writer;
  }

  /**
   * Set before {@link #start()}: run on the thread that noticed it when the server turns out to be
   * a primary (not in recovery), and when it is a standby again (or for the first time).
   */
  void onRoleChange(Runnable promoted, Runnable standby) {
    this.onPromoted = promoted;
    this.onStandby = standby;
  }

  @Override
  void start() {
    quietUntilNanos = System.nanoTime()
        + Math.max(10 * intervalNanos(), TimeUnit.SECONDS.toNanos(10));
    super.start();
  }

  /**
   * A session of this server reported {@code in_hot_standby=off} (PostgreSQL 14+, no round trip):
   * it was promoted. Reads stop routing to it now, not at the next probe.
   */
  void noticePromoted() {
    promotedNoticedNanos = System.nanoTime();
    beatNanos = UNKNOWN;
    moveTo(State.NOT_IN_RECOVERY, "a session reported in_hot_standby=off: it was promoted");
  }

  /** Hot path: two volatile reads, no allocation. */
  boolean isFresh(long nowNanos, long maxAgeNanos) {
    long beat = beatNanos;
    if (beat == UNKNOWN || nowNanos - beat > maxAgeNanos) return false;
    return nowNanos - stalledAfterNanos <= 0;
  }

  /** Effective lag in nanoseconds, {@link Long#MAX_VALUE} when unknown or the probe is stalled. */
  long effectiveLagNanos(long nowNanos) {
    long beat = beatNanos;
    if (beat == UNKNOWN) return Long.MAX_VALUE;
    if (nowNanos - stalledAfterNanos > 0) return Long.MAX_VALUE; // the stall rule of isFresh
    return Math.max(0, nowNanos - beat);
  }

  /** The replica's last sampled replay position (unsigned), 0 when unknown. */
  long replayLsn() {
    return replayLsn;
  }

  State state() {
    return state;
  }

  String name() {
    return name;
  }

  String lastError() {
    return lastError;
  }

  /** The replica's clock offset from this client's (reported only, never used to route). */
  ClockOffset clockOffset() {
    return clockOffset;
  }

  /**
   * Stores a measurement: the replica was {@code lagSeconds} behind at {@code sentNanos}
   * (negative: zero). Tests and benchmarks set the lag this way; probes use
   * {@link #containsCommitsBefore}.
   */
  void record(long sentNanos, double lagSeconds) {
    long lagNanos = lagSeconds > 0 ? (long) (lagSeconds * 1e9) : 0L;
    beatNanos = sentNanos - lagNanos;
  }

  /** Stores a measurement: the replica shows every commit from before {@code clientNanos}. */
  void containsCommitsBefore(long clientNanos) {
    beatNanos = clientNanos;
  }

  /** Marks a probe as in flight since {@code startedNanos} (0: none), as the probe loop does. */
  void probeInFlightSince(long startedNanos) {
    probing = startedNanos != 0;
    stalledAfterNanos = startedNanos == 0 ? System.nanoTime() + NO_PROBE_NANOS
        : startedNanos + stallNanos;
  }

  void forget() {
    beatNanos = UNKNOWN;
  }

  /** Its sessions reach the server {@link ServerWatchers} gives it among those of its address. */
  void measureServerOf(ServerWatchers s) {
    servers = s;
  }

  /** The servers of its address, null when not asked (unit tests). */
  ServerWatchers servers() {
    return servers;
  }

  /** From now on it measures {@code k} (and reconnects until it reaches it). */
  void measures(ServerKey k) {
    server = k;
  }

  /** The server it measures, null before it reached one. */
  ServerKey server() {
    return server;
  }

  /**
   * Through an address that may reach several servers: connects until it reaches its own server
   * (each session reaching another one makes that server known to {@link ServerWatchers}), a
   * bounded number of tries. When every try reached one same other server, the address reaches
   * that one alone now: the address's first watcher measures it instead.
   */
  @Override
  Connection connect() throws SQLException {
    ServerWatchers s = servers;
    if (s == null) return super.connect();
    for (int attempt = 0; attempt < 2; attempt++) {
      int tries = 4 + 2 * s.known();
      ServerKey only = null;
      boolean oneOther = true;
      for (int i = 0; i < tries; i++) {
        Connection c = super.connect();
        ServerKey k;
        try {
          k = ServerKey.read(c);
        } catch (SQLException | RuntimeException e) {
          closeQuietly(c);
          throw e;
        }
        if (s.watcherFor(k) == this) return c;
        closeQuietly(c);
        if (only == null) {
          only = k;
        } else if (!only.equals(k)) {
          oneOther = false;
        }
      }
      if (!(this == s.first && oneOther && only != null && s.firstMovedTo(only))) {
        throw new SQLException("omnium: replica " + name + ": " + tries + " sessions through"
            + " the address reached other servers, none reached " + server, "08001");
      }
    }
    throw new SQLException("omnium: replica " + name + " reaches no server steadily", "08001");
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // discarded either way
    }
  }

  /** Rounds until the next look for other servers behind the address, and the current gap. */
  private int roundsToDiscovery = 1;
  private int discoveryGap = 1;
  /** The longest gap between two looks for other servers, in rounds. */
  static final int MAX_DISCOVERY_GAP = 64;

  @Override
  void prepare(Connection c) throws SQLException {
    identity = primaryIdentity == null ? null : ServerIdentity.read(c);
    verdict = null;
  }

  /**
   * This standby against the primary; null while the primary's identity is not known yet (its
   * sampler has not connected). The system identifier is read once per session; a timeline that
   * differed, or an identity that could not be read, is read again at each probe, so a standby
   * that follows the primary's timeline again is fresh again by itself.
   */
  private ServerIdentity.Verdict judge(Connection c) throws SQLException {
    if (primaryIdentity == null) return ServerIdentity.Verdict.SAME; // not checked (unit tests)
    ServerIdentity primary = primaryIdentity.get();
    if (primary == null) return null;
    ServerIdentity.Verdict v = verdict;
    if (v == ServerIdentity.Verdict.SAME && primary == judgedAgainst) return v;
    if (v == ServerIdentity.Verdict.DIVERGED_TIMELINE
        || v == ServerIdentity.Verdict.IDENTITY_UNKNOWN) {
      identity = ServerIdentity.read(c); // its timeline may have moved on, a grant been given
    }
    verdict = v = identity.against(primary);
    judgedAgainst = primary;
    return v;
  }

  @Override
  void round() {
    ServerWatchers s = servers;
    boolean first = s != null && s.first == this;
    if (first && s.several()) s.forgetUnseen(System.nanoTime());
    probe();
    // The look for other servers comes after the probe, and only when the server just answered:
    // a login through a frozen address waits out its socket timeout, which must never delay the
    // probe that finds the freeze (and aborts the reads stuck on it). Only rounds in which a read
    // found no fresh server here count: while one is fresh, or nobody reads, there is nothing a
    // look could find for anyone (the pool's own sessions still make the servers they reach
    // known), and an idle fleet makes no logins for it.
    if (first && s.takeNoneWasFresh() && --roundsToDiscovery <= 0
        && state != State.UNREACHABLE) {
      discover(s);
    }
    evaluateAlert();
  }

  /**
   * One session through the address, closed at once, to see which server it reaches: a server
   * no read has reached yet (the reads go elsewhere while the one server known is stale) is
   * found this way. The gap, counted in rounds in which a read found no fresh server here,
   * doubles up to {@link #MAX_DISCOVERY_GAP} rounds, and starts again from one round when a
   * server is found.
   */
  private void discover(ServerWatchers s) {
    discoveryGap = Math.min(MAX_DISCOVERY_GAP, discoveryGap * 2);
    roundsToDiscovery = discoveryGap;
    try {
      Connection c = connector().connect();
      try {
        int before = s.known();
        s.watcherFor(ServerKey.read(c));
        if (s.known() > before) discoveryGap = roundsToDiscovery = 1;
      } finally {
        closeQuietly(c);
      }
    } catch (SQLException | RuntimeException e) {
      // the address does not answer: the probe finds and reports it
    }
  }

  private void evaluateAlert() {
    if (!alerts.isEmpty()) {
      long now = System.nanoTime();
      long lag = effectiveLagNanos(now);
      for (LagAlert a : alerts) a.evaluate(now, lag);
    }
  }

  @Override
  boolean inFlight() {
    return probing;
  }

  void probe() {
    long sent = System.nanoTime();
    probeInFlightSince(sent);
    try {
      Connection connection = session();
      long sentMicros = ClockOffset.nowMicros();
      try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(query)) {
        long receivedMicros = ClockOffset.nowMicros();
        if (!rs.next()) {
          beatNanos = UNKNOWN;
          moveTo(State.NO_HEARTBEAT_ROW, "no row with id = 1 in " + table);
          return;
        }
        boolean inRecovery = rs.getBoolean(1);
        rs.getDouble(2); // only whether there is a beat matters
        boolean noBeat = rs.wasNull();
        String lsn = rs.getString(3);
        clockOffset.record(sentMicros, receivedMicros, rs.getDouble(4));
        if (!inRecovery) {
          beatNanos = UNKNOWN;
          moveTo(State.NOT_IN_RECOVERY,
              "the server is not in recovery: it is a primary, not a replica");
          return;
        }
        replayLsn = lsn == null ? 0 : Lsn.parse(lsn);
        if (promotedNoticedNanos - sent > 0) return; // sent before a session saw the promotion
        ServerIdentity.Verdict v = judge(connection);
        if (v != ServerIdentity.Verdict.SAME) {
          beatNanos = UNKNOWN;
          if (v != null) {
            moveTo(State.valueOf(v.name()), identity.explain(v, judgedAgainst));
          }
          return;
        }
        if (noBeat) {
          beatNanos = UNKNOWN;
          moveTo(State.NO_HEARTBEAT_ROW, "beat_at is null in " + table);
          return;
        }
        // The heartbeat's age (replica clock minus primary clock) is never used: positions are.
        long replay = replayLsn;
        beatNanos = replay == 0 ? UNKNOWN : timeline.containsCommitsBefore(replay);
        moveTo(State.OK, null);
      }
    } catch (SQLException e) {
      beatNanos = UNKNOWN;
      onError(e);
    } catch (RuntimeException e) {
      beatNanos = UNKNOWN;
      dropSession();
      moveTo(State.UNREACHABLE, e.toString());
    } finally {
      probeInFlightSince(0);
    }
    if (quiet && System.nanoTime() - quietUntilNanos > 0) {
      quiet = false; // the grace is over and the heartbeat is still missing: now it is a problem
      log.warn("omnium: replica {} lag still unknown ({}): {}. Reads go to the fallback pool"
          + " until it recovers.", name, state, lastError);
    }
  }

  private void onError(SQLException e) {
    String sqlState = e.getSQLState();
    if ("42P01".equals(sqlState) || "3F000".equals(sqlState)) {
      // No heartbeat table: still tell a misconfigured primary apart from a replica without the
      // table.
      moveTo(isInRecovery() ? State.NO_HEARTBEAT_TABLE : State.NOT_IN_RECOVERY, writerHere
          ? "table " + table + " does not exist yet (the heartbeat writer of this process"
              + " creates it on the primary once elected; if this lasts, see the writer's log)"
          : "table " + table + " does not exist (enable heartbeatWriter=true in one application,"
              + " run java -jar omnium-jdbc.jar heartbeat, or create and write it on the primary)");
    } else if ("42501".equals(sqlState)) {
      moveTo(State.PERMISSION_DENIED, HeartbeatProblems.permissionDenied(table, e.getMessage()));
    } else if ("42601".equals(sqlState)) {
      moveTo(State.BAD_TABLE_NAME, HeartbeatProblems.badTableName(table));
    } else if ("40001".equals(sqlState)) {
      if (SqlStates.connectionDead(e)) dropSession(); // FATAL: one reconnect at the next probe
      moveTo(State.RECOVERY_CONFLICT, HeartbeatProblems.recoveryConflict(e.getMessage()));
    } else if ("42703".equals(sqlState) || "42804".equals(sqlState) || "42883".equals(sqlState)) {
      moveTo(State.BAD_HEARTBEAT_TABLE, "table " + table
          + " has the wrong shape: expected (id int PRIMARY KEY CHECK (id = 1), beat_at"
          + " timestamptz NOT NULL): "
          + e.getMessage());
    } else {
      dropSession();
      moveTo(State.UNREACHABLE, e.getMessage() + " (SQLState " + sqlState + ")");
      Runnable action = onTimeout;
      if (action != null && SqlStates.timedOut(e)) action.run();
    }
  }

  private boolean isInRecovery() {
    try (Statement st = session().createStatement(); ResultSet rs =
        st.executeQuery("SELECT pg_is_in_recovery()")) {
      return rs.next() && rs.getBoolean(1);
    } catch (SQLException | RuntimeException e) {
      return true;
    }
  }

  // synchronized: the watcher thread and a session reporting a promotion may both move it
  private synchronized void moveTo(State next, String detail) {
    State prev = state;
    lastError = detail;
    if (prev == next) return;
    state = next;
    boolean wasQuiet = quiet;
    quiet = false;
    boolean wasPrimary = prev == State.NOT_IN_RECOVERY;
    switch (next) {
      case OK:
        if (wasPrimary) {
          log.info("omnium: {} is a standby again (in recovery) and its heartbeat is readable;"
              + " reads may route to it", name);
        } else if (prev == State.STARTING) {
          log.info("omnium: replica {} heartbeat readable; reads may route to it", name);
        } else {
          log.info("omnium: replica {} heartbeat readable again (was {}); reads may route to it",
              name, prev);
        }
        break;
      case NO_HEARTBEAT_TABLE:
      case NO_HEARTBEAT_ROW:
        boolean firstStart = prev == State.STARTING || wasQuiet;
        if (writerHere && firstStart && System.nanoTime() - quietUntilNanos < 0) {
          quiet = true;
          log.info("omnium: replica {} has no heartbeat yet ({}): {}. Reads go to the fallback pool"
              + " until it replicates.", name, next, detail);
          break;
        }
        log.warn("omnium: replica {} lag unknown ({}): {}. Reads go to the fallback pool until it"
            + " recovers.", name, next, detail);
        break;
      case FOREIGN_CLUSTER:
      case DIVERGED_TIMELINE:
      case IDENTITY_UNKNOWN:
        log.warn("omnium: replica {} is not a replica of this primary ({}): {}. No read is routed"
            + " to it until it is.", name, next, detail);
        break;
      case NOT_IN_RECOVERY:
        // Every node may be listed as a replica (Patroni-style): the primary is an expected role.
        log.info("omnium: {} is the primary now ({}): no read is routed to it through its replica"
            + " pool, which is emptied; reads that need the primary take the fallback route",
            name, detail);
        break;
      default:
        log.warn("omnium: replica {} lag unknown ({}): {}. Reads go to the fallback pool until"
            + " it recovers.",
            name, next, detail);
    }
    // Only these states say what the server is: a missing row or a bad table do not.
    boolean primaryNow = next == State.NOT_IN_RECOVERY;
    if (!primaryNow && next != State.OK && next != State.NO_HEARTBEAT_TABLE) return;
    if (standby != null && standby != primaryNow) return; // same role as before
    standby = !primaryNow;
    Runnable action = primaryNow ? onPromoted : onStandby;
    if (action != null) action.run();
  }

  /** Null until the first answer: the server's role as last seen. */
  private Boolean standby;

  /** Whether the last answer said the server is a standby (false also before any answer). */
  synchronized boolean knownStandby() {
    return Boolean.TRUE.equals(standby);
  }

  @Override
  public String toString() {
    return "LagWatcher[" + name + ", " + state + "]";
  }
}
