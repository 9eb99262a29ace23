package dev.omnium.jdbc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import org.postgresql.PGConnection;

/**
 * One physical session lent to one logical connection: the connection, its route and endpoint,
 * what the logical connection changed on it, and its release. Released at most once, whichever
 * thread gets there first (the application, a pool's abort or eviction), so a replica's in-use
 * count never drifts. A session that goes back to a pool is lent again in the state a new one
 * has: what JDBC or SQL changed is reset, and so is any setting the server reports as changed
 * (ParameterStatus); one whose state a reset cannot undo with certainty is closed instead
 * ({@link SessionEffect}, {@link SessionReset}).
 */
final class Binding {
  /** Settings the server reports when they change (some only on newer servers). */
  static final String[] REPORTED = {"default_transaction_read_only", "application_name",
      "TimeZone", "DateStyle", "IntervalStyle", "search_path", "session_authorization",
      "standard_conforming_strings", "client_encoding"};

  private static final VarHandle CONNECTION;

  static {
    try {
      CONNECTION = MethodHandles.lookup().findVarHandle(Binding.class, "connection",
          Connection.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Router router;
  private final PrimarySource primarySource;
  private final boolean pooled;

  /** Written last when bound, cleared first when released (CAS): others read it first. */
  private volatile Connection connection;
  /** The pgjdbc session under the pool's proxy (see {@link #session()}). */
  private Connection session;
  /** The replica session wrapper under the pool's proxy, or null (other routes, not pooled). */
  private ReplicaSessionBase replica;
  private Route route;
  private ReplicaEndpoint endpoint;

  /**
   * What each transaction on the session must set (behind a pooler, {@link TransactionSettings});
   * null when its startup packet did it.
   */
  TransactionSettings perTransaction;
  /** The session's current transaction has those settings. */
  boolean settingsSent;
  /**
   * Behind a pooler, the settings the logical connection set with SQL, which each transaction
   * carries with the route's ({@link SqlSettings#carriedWith}) instead of a replay on the session
   * the pooler shares; null otherwise.
   */
  SqlSettings carried;
  /**
   * A primary session kept by its logical connection that is known to hold no transaction and no
   * warnings, with auto-commit on, and on which nothing ran since: the logical connection's
   * read-only units of work leave it alone (no auto-commit flip, commit or warning clearance,
   * each a no-op there for pgjdbc), and a logical auto-commit of false waits for
   * {@link #wake(boolean)}, which everything that uses the session calls first.
   */
  boolean quiet;
  /**
   * pgjdbc's own objects of the session were handed out (a {@code CopyManager}, a
   * {@code LargeObjectManager}, ...): they may run SQL there unseen, so it is never quiet again.
   */
  boolean handedOut;
  /** Statements run in the current read-only unit of work: only the first may be retried. */
  int statements;
  boolean retried;
  /** {@link SessionState} bits applied to this session, to undo before it goes back. */
  int applied;
  /**
   * The strongest {@link SessionEffect} of the SQL run here (or replayed here): a setting is reset
   * on return even where the server reports nothing (search_path before PostgreSQL 18), a call
   * the driver cannot classify is also checked, stateful SQL closes the session.
   */
  int effect;
  int networkTimeoutBefore;
  int holdabilityBefore;
  Map<String, Class<?>> typeMapBefore;
  /** The {@link #REPORTED} values at bind: a replica session's own record, else this binding's. */
  private String[] reportedAtBind;
  private String[] ownReported;

  Binding(Router router, PrimarySource primarySource, boolean pooled) {
    this.router = router;
    this.primarySource = primarySource;
    this.pooled = pooled;
  }

  void bind(Connection c, Route route, ReplicaEndpoint endpoint) {
    this.route = route;
    this.endpoint = endpoint;
    statements = 0;
    retried = false;
    applied = 0;
    effect = SessionEffect.NONE;
    quiet = false;
    handedOut = false;
    PGConnection pg = null;
    ReplicaSessionBase rs = null;
    if (pooled) {
      // only replica pools lend session wrappers: other routes skip the wrapper look-up
      rs = route == Route.REPLICA ? replicaSession(c) : null;
      pg = rs != null && rs.pg != null ? rs.pg : pg(c);
      snapshotReported(rs, pg);
      replica = rs;
    } else {
      replica = null;
    }
    perTransaction = rs != null ? rs.perTransaction
        : route == Route.REPLICA || router == null ? null : router.perTransaction(route);
    settingsSent = false;
    carried = null;
    session = pg instanceof Connection ? (Connection) pg : c;
    connection = c; // volatile write last: a releasing thread that sees c sees the rest
  }

  Connection connection() {
    return connection;
  }

  /**
   * The settings its session set when it opened, where a pooler pins sessions ({@link
   * PinnedSettings}); null otherwise. Read where the user's settings or a reset touch the
   * session, never per transaction.
   */
  PinnedSettings pinned() {
    if (route == Route.REPLICA) {
      ReplicaSessionBase rs = replica;
      return rs == null ? null : rs.pinned;
    }
    return router == null || route == null ? null : router.pinned(route);
  }

  /**
   * Released, before its logical connection's state is lent again: forgets the last session and
   * what was undone on it, so nothing keeps a session reachable or reaches the next user.
   */
  void clear() {
    session = null;
    replica = null;
    route = null;
    endpoint = null;
    reportedAtBind = null;
    typeMapBefore = null;
    statements = 0;
    retried = false;
    applied = 0;
    effect = SessionEffect.NONE;
    quiet = false;
    handedOut = false;
    perTransaction = null;
    settingsSent = false;
    carried = null;
  }

  /**
   * Before the session is used: a {@link #quiet} one takes the logical connection's auto-commit
   * it was spared (pgjdbc's flag alone: nothing goes to the server) and is no longer quiet.
   */
  void wake(boolean autoCommit) throws SQLException {
    if (!quiet) return;
    if (!autoCommit) connection.setAutoCommit(false);
    quiet = false;
  }

  /** SQL with {@code effect} runs (or was replayed) on this session. */
  void saw(int sqlEffect) {
    if (sqlEffect > effect) effect = sqlEffect;
  }

  /** The session goes back to a pool, to be lent again. */
  boolean pooled() {
    return pooled;
  }

  /**
   * The pgjdbc session itself, under its pool's proxy. Read statements are prepared on it: omnium
   * tracks and closes its physical statements itself (they are closed before the session goes
   * back), so the pool's statement and result-set proxies would be a second, unused layer.
   */
  Connection session() {
    return session;
  }

  Route route() {
    return route;
  }

  ReplicaEndpoint endpoint() {
    return endpoint;
  }

  private void snapshotReported(ReplicaSessionBase rs, PGConnection pg) {
    String[] at = rs == null ? null : rs.reported;
    if (at != null) { // what every return to the pool checked: no lookups
      reportedAtBind = at;
      return;
    }
    if (rs != null) {
      at = new String[REPORTED.length];
    } else {
      if (ownReported == null) ownReported = new String[REPORTED.length];
      at = ownReported;
    }
    for (int i = 0; i < at.length; i++) {
      at[i] = pg == null ? null : pg.getParameterStatus(REPORTED[i]);
    }
    if (rs != null) rs.reported = at;
    reportedAtBind = at;
  }

  /** The replica session wrapper under a pool's proxy, or null when {@code c} has none. */
  /** The replica session wrapper bound, or null (other routes, not pooled). */
  ReplicaSessionBase replicaSession() {
    return replica;
  }

  static ReplicaSessionBase replicaSession(Connection c) {
    try {
      return c.isWrapperFor(ReplicaSessionBase.class) ? c.unwrap(ReplicaSessionBase.class) : null;
    } catch (SQLException | RuntimeException e) {
      return null;
    }
  }

  /**
   * True when the server last said the bound session's server is not a hot standby: a replica
   * session's live settings, else pgjdbc's look-up.
   */
  boolean reportsPrimary() {
    ReplicaSessionBase rs = replica;
    return rs != null ? rs.reportsPrimary() : RoleSignal.reportsPrimary(session);
  }

  /** The server reported a change of a session setting since the session was bound. */
  private boolean reportedChanged(PGConnection pg, ReplicaSessionBase rs) {
    if (pg == null) return false;
    String[] at = reportedAtBind;
    ReportedStatus st = rs == null ? null : rs.status;
    if (st != null) return st.differsFrom(at);
    for (int i = 0; i < at.length; i++) {
      String now = pg.getParameterStatus(REPORTED[i]);
      if (now != at[i] && (now == null || !now.equals(at[i]))) return true;
    }
    return false;
  }

  /** pgjdbc's connection: the session bound, without another unwrap, where it is pgjdbc's. */
  private static PGConnection pg(Connection session, Connection c) {
    return session instanceof PGConnection p ? p : pg(c);
  }

  private static PGConnection pg(Connection c) {
    try {
      return c.unwrap(PGConnection.class);
    } catch (SQLException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Gives the session back (reset first when it returns to a pool), or evicts it when
   * {@code dead}. Returns false when another thread released it already.
   */
  boolean release(boolean dead) {
    return endQuietly(dead, false);
  }

  /** Cuts the session's socket now, on this thread, then evicts it; false if already released. */
  boolean abort() {
    return endQuietly(true, true);
  }

  /** The reset on return is omnium's own work, and so is the pool's: no span (see Tracing). */
  private boolean endQuietly(boolean dead, boolean abort) {
    Object quiet = Tracing.quietBegin();
    try {
      return end(dead, abort);
    } finally {
      Tracing.quietEnd(quiet);
    }
  }

  private boolean end(boolean dead, boolean abort) {
    Connection c = connection;
    if (c == null) return false;
    Connection s = session;
    ReplicaSessionBase rs = replica;
    Route r = route;
    ReplicaEndpoint e = endpoint;
    // claim it first: once given back, the session may already be another borrower's
    if (!CONNECTION.compareAndSet(this, c, null)) return false;
    if (abort) {
      try {
        PGConnection pg = pg(s, c);
        if (pg != null) {
          ((Connection) pg).abort(Runnable::run);
        } else {
          c.abort(Runnable::run);
        }
      } catch (SQLException | RuntimeException ignored) {
        // gone already
      }
    }
    if (!dead && pooled) dead = !resetForPool(c, s, rs, r);
    if (r == Route.REPLICA) {
      e.release(c, rs, s, dead);
    } else if (r == Route.FALLBACK) {
      router.releaseFallback(c, dead);
    } else {
      primarySource.release(c, dead);
    }
    return true;
  }

  /**
   * Undoes on a pooled session what this logical connection changed: one round trip when a JDBC
   * setter, SQL or the server's reports say something changed ({@link SessionReset#RESET}, which
   * restores the startup values, read-only included, role and session authorization too; checked
   * as well after a call the driver could not classify), then the client-side values. False when
   * the session must be closed instead: stateful SQL ran, the check found state, or a setting
   * differs still.
   */
  private boolean resetForPool(Connection c, Connection s, ReplicaSessionBase rs, Route r) {
    int bits = applied;
    int sql = effect;
    Map<String, Class<?>> typeMap = typeMapBefore;
    typeMapBefore = null;
    if (sql == SessionEffect.STATEFUL) return closedForState();
    PGConnection pg = pg(s, c);
    try {
      // The pool rolls back only what ran through its own statement proxies: a read session's
      // statements did not (see session()), so a transaction left open is rolled back here.
      if (r != Route.PRIMARY && PgTransactionState.inTransactionOn(s)) c.rollback();
      if ((bits & SessionState.NEEDS_SQL_RESET) != 0 || sql != SessionEffect.NONE
          || reportedChanged(pg, rs)) {
        if (!c.getAutoCommit()) {
          c.rollback();
          c.setAutoCommit(true);
        }
        router.sessionResets.increment();
        PinnedSettings pinned = pinned();
        boolean clean = SessionReset.run(c, sql == SessionEffect.UNSURE,
            pinned == null ? null : pinned.set);
        // a setting still different afterwards is not ours to undo
        if (!clean || reportedChanged(pg, rs)) return closedForState();
      }
      if ((bits & SessionState.NETWORK_TIMEOUT) != 0) {
        c.setNetworkTimeout(Runnable::run, networkTimeoutBefore);
      }
      if ((bits & SessionState.HOLDABILITY) != 0) c.setHoldability(holdabilityBefore);
      if ((bits & SessionState.TYPE_MAP) != 0) c.setTypeMap(typeMap);
      if (r != Route.PRIMARY && perTransaction == null) {
        // the reported settings equal those at bind here (checked above): no second look-up
        String ro = pg == null ? null : reportedAtBind[0];
        // read routes stay read-only: a session that says otherwise is never lent again (behind
        // a pooler every transaction is read-only instead, whatever the session says)
        if (ro != null && !"on".equals(ro)) return closedForState();
      }
      return true;
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }

  private boolean closedForState() {
    router.sessionsClosedForState.increment();
    return false;
  }

  @Override
  public String toString() {
    return "Binding[" + route + (connection == null ? ", released" : "") + "]";
  }
}
