package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The read side of one logical connection: the current read binding (replica or fallback) and
 * the bindings it left while statements still held results on them. A binding is routed when a
 * read-only unit of work starts, kept while it is still the right choice (autocommit) or until
 * the transaction ends, and released once no statement holds results on it, so a result set or
 * a callable statement's OUT values stay readable exactly as long as with pgjdbc.
 *
 * <p>Used by the connection's own thread; {@link #releaseAll()} and {@link #abortAll()} may run
 * on another, and each binding is released at most once.
 */
final class ReadBindings {
  private final Router router;
  private final PrimarySource primarySource;
  /** The current binding; its connection is null while unbound. Reused: no allocation per read. */
  private volatile Binding current;
  /** Bindings left with results still open on them; null while none (the usual case). */
  private volatile List<Binding> retired;

  ReadBindings(Router router, PrimarySource primarySource) {
    this.router = router;
    this.primarySource = primarySource;
  }

  /** Nothing bound and nothing set aside: what a closed connection's state may be lent with. */
  boolean idle() {
    Binding b = current;
    return retired == null && (b == null || b.connection() == null);
  }

  /** Before the state is lent again: the reused binding forgets its last session. */
  void clear() {
    Binding b = current;
    if (b != null) b.clear();
  }

  /** The current binding, or null when never bound. */
  Binding current() {
    return current;
  }

  /** The bound read session, or null. */
  Connection connection() {
    Binding b = current;
    return b == null ? null : b.connection();
  }

  /** The route of the bound read session, or null. */
  Route route() {
    Binding b = current;
    return b == null || b.connection() == null ? null : b.route();
  }

  /** A read-only transaction has run a statement on the bound session. */
  boolean inTransaction(boolean autoCommit) {
    Binding b = current;
    return b != null && b.connection() != null && !autoCommit && b.statements > 0;
  }

  /**
   * Whether the bound session is still the right choice for an autocommit statement: a fresh
   * replica that has the position the work must see, or the fallback while no replica would do.
   */
  boolean keep(long now, long maxAgeNanos, long mustSee, boolean primaryOnly) {
    Binding b = current;
    boolean keep;
    if (b.route() == Route.REPLICA) {
      ReplicaEndpoint e = b.endpoint();
      keep = !primaryOnly && e.isFresh(b.replicaSession(), now, maxAgeNanos, mustSee);
    } else {
      keep = primaryOnly || router.pickReplica(now, maxAgeNanos, mustSee) == null;
    }
    if (keep) { // a new unit of work on the same session
      b.statements = 0;
      b.retried = false;
      count(b.route());
    }
    return keep;
  }

  /** Routes a new unit of work: the least-loaded fresh replica, else the fallback pool. */
  Connection bindNew(long now, long maxAgeNanos, long mustSee, boolean primaryOnly,
                     SessionState state) throws SQLException {
    if (!primaryOnly) {
      Connection c = bindReplica(now, maxAgeNanos, mustSee, state);
      if (c != null) return c;
    }
    return bindFallback(maxAgeNanos, mustSee, primaryOnly, state);
  }

  /**
   * The last {@link #bindReplica} found no replica fresh enough (rather than one that lent
   * nothing or had not replayed the position): a wait for the fallback may end in a replica.
   */
  private boolean noneWasFresh;

  /** The least-loaded fresh replica's session, bound; null when none can serve. */
  private Connection bindReplica(long now, long maxAgeNanos, long mustSee, SessionState state)
      throws SQLException {
    ReplicaEndpoint r = router.pickReplica(now, maxAgeNanos, mustSee);
    boolean checkPosition = false;
    if (r == null && mustSee != 0 && mustSee != WritePositions.UNKNOWN) {
      // No replica's sample shows the position yet: one check on a fresh replica decides.
      r = router.pickReplica(now, maxAgeNanos, 0);
      checkPosition = true;
    }
    noneWasFresh = r == null;
    if (r == null) return null;
    Connection c;
    try {
      c = r.borrow(now, maxAgeNanos, checkPosition ? 0 : mustSee);
    } catch (SQLException e) {
      // The replica lent nothing within replicaAcquireTimeout: the fallback serves.
      router.replicaAcquireFailures.increment();
      return null;
    }
    if (c == null || checkPosition && !hasReplayed(r, c, mustSee)) return null;
    try {
      return bind(c, Route.REPLICA, r, state);
    } catch (SQLException e) {
      // Applying the connection's state met a session that ended in the pool: nothing of the
      // unit of work ran, so it goes to the fallback route as a failed first statement would
      // (routing contract, rule 5).
      if (!deadAtBind(e, c)) throw e;
      return retriedOnFallback(state, e);
    }
  }

  /**
   * A fallback session, bound. A unit of work that waits at the fallback cap because no replica
   * was fresh enough goes to a replica instead as soon as one is (once: should that replica lend
   * nothing, it waits out what is left of poolTimeout for the fallback).
   */
  private Connection bindFallback(long maxAgeNanos, long mustSee, boolean primaryOnly,
      SessionState state) throws SQLException {
    long wait = router.config.poolTimeout().toNanos();
    long started = System.nanoTime();
    Connection f = router.borrowFallback(wait, primaryOnly || !noneWasFresh ? null
        : () -> router.pickReplica(System.nanoTime(), maxAgeNanos, mustSee) != null);
    if (f == null) { // a replica is fresh enough again: it serves, not the cap's next session
      Connection c = bindReplica(System.nanoTime(), maxAgeNanos, mustSee, state);
      if (c != null) return c;
      f = router.borrowFallback(Math.max(1, wait - (System.nanoTime() - started)), null);
    }
    try {
      return bind(f, Route.FALLBACK, null, state);
    } catch (SQLException e) {
      if (!deadAtBind(e, f)) throw e;
      return retriedOnFallback(state, e); // a fallback session lost in the pool: once more
    }
  }

  /**
   * The one retry of a unit of work whose session was found dead when it was bound; when that
   * fails too, the lost session's error (class 08) with the retry's suppressed.
   */
  private Connection retriedOnFallback(SessionState state, SQLException dead)
      throws SQLException {
    router.retries.increment();
    try {
      bind(router.borrowFallback(), Route.FALLBACK, null, state);
    } catch (SQLException again) {
      SQLException lost = SqlStates.asConnectionLost(dead);
      lost.addSuppressed(again);
      throw lost;
    }
    current.retried = true;
    return current.connection();
  }

  private static boolean deadAtBind(SQLException e, Connection c) {
    return SqlStates.connectionDead(e) || closedQuietly(c);
  }

  /** Asks the replica session itself; gives it back when it has not replayed the position. */
  private boolean hasReplayed(ReplicaEndpoint r, Connection c, long lsn) {
    router.writePositionChecks.increment();
    boolean ok = false;
    boolean dead = false;
    try {
      c.setAutoCommit(true); // a unit of work of its own, not the start of the reader's
      try (Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT pg_last_wal_replay_lsn()::text")) {
        String replayed = rs.next() ? rs.getString(1) : null;
        ok = replayed != null && Long.compareUnsigned(Lsn.parse(replayed), lsn) >= 0;
      }
      c.setAutoCommit(Route.REPLICA.lentAutoCommit); // as lent: the reader's state comes next
    } catch (SQLException e) {
      dead = SqlStates.connectionDead(e);
    } catch (RuntimeException e) {
      ok = false;
    }
    if (!ok) r.release(c, c, dead);
    return ok;
  }

  /**
   * Called by a statement whose execution failed. Returns the fallback session to retry on when
   * the error is a replica recovery conflict (or a lost replica session) at the first statement
   * of a read-only unit of work, so nothing from it reached the caller; otherwise null.
   *
   * @throws SQLException the original error's SQLState (40001, class 08) when no fallback
   *     session can be had for the retry; the original is the cause, the pool's the suppressed;
   *     or, when the fallback's logins are refused, that refusal as pgjdbc reports it
   */
  Connection retryTarget(SQLException e, List<LogicalStatement> statements, SessionState state)
      throws SQLException {
    Binding b = current;
    Connection c = b == null ? null : b.connection();
    // A fallback session lost at the first statement (the primary crashed or was switched over)
    // is retried the same way: the read waits for the fallback once more, at most poolTimeout,
    // and reaches the new primary.
    boolean lostFallback = b != null && b.route() == Route.FALLBACK && SqlStates.connectionDead(e);
    if (c == null || (b.route() != Route.REPLICA && !lostFallback) || b.statements != 1
        || b.retried || !SqlStates.retryableOnReplica(e)) {
      return null;
    }
    String failed = lostFallback ? "the fallback session" : "replica " + b.endpoint().name;
    leave(statements, SqlStates.connectionDead(e) || closedQuietly(c));
    Connection f;
    try {
      f = router.borrowFallback();
    } catch (SQLException busy) {
      if (SqlStates.loginRefused(busy)) {
        // No session can be had at all (a changed password, ...): that is the cause to report,
        // as a new pgjdbc connection would; the lost session's error goes with it.
        busy.addSuppressed(e);
        throw busy;
      }
      // The replica was fresh: the retry found the fallback pool full or the primary unreachable.
      // The caller gets the replica's error (readWithRetry recognises a 40001), the pool's as
      // the suppressed exception.
      SQLException kept = new SQLException("omnium: " + failed + " failed the statement"
          + " (SQLState " + e.getSQLState() + ": " + e.getMessage() + ") and the transparent"
          + " retry got no fallback connection within poolTimeout ("
          + router.config.poolTimeout().toMillis() + " ms, fallbackPoolSize "
          + router.config.fallbackPoolSize() + "); the pool's error is suppressed",
          e.getSQLState(), e);
      kept.addSuppressed(busy);
      throw kept;
    }
    bind(f, Route.FALLBACK, null, state);
    current.statements = 1;
    current.retried = true;
    return f;
  }

  /** Binds a borrowed session and applies the logical state to it. */
  Connection bind(Connection c, Route route, ReplicaEndpoint endpoint, SessionState state)
      throws SQLException {
    Binding b = current;
    if (b == null) current = b = new Binding(router, primarySource, true);
    b.bind(c, route, endpoint);
    try {
      // Behind a pooler pgjdbc's BEGIN READ ONLY spares each transaction a setting. Not where the
      // startup packet made the session read-only: a plain BEGIN is less work for the server.
      if (b.perTransaction != null && router.readOnlyBegin) {
        PgTransactionState.beginReadOnly(b.session());
      }
      state.applyTo(b);
    } catch (SQLException e) {
      b.release(SqlStates.connectionDead(e) || closedQuietly(c));
      throw e;
    }
    count(route);
    return c;
  }

  private void count(Route route) {
    if (route == Route.REPLICA) {
      router.replicaRoutes.increment();
    } else {
      router.fallbackRoutes.increment();
    }
  }

  /**
   * Ends the current binding: released (its statements detached), or set aside while another
   * statement still holds results on it.
   */
  void leave(List<LogicalStatement> statements, boolean dead) {
    Binding b = current;
    Connection c = b == null ? null : b.connection();
    if (c == null) return;
    if (!dead && holdsResults(statements, c)) {
      current = null;
      List<Binding> r = retired;
      if (r == null) retired = r = new ArrayList<>(2);
      r.add(b);
      return;
    }
    for (int i = statements.size() - 1; i >= 0; i--) statements.get(i).detach(c);
    b.release(dead);
  }

  /** After a statement closed: gives back what no open statement uses any more. */
  void statementClosed(List<LogicalStatement> statements, boolean autoCommit) {
    if (retired != null) releaseUnused(statements);
    Binding b = current;
    Connection c = b == null ? null : b.connection();
    if (c != null && autoCommit && !inUse(statements, c)) b.release(false);
  }

  /** Releases the set-aside bindings no statement holds results on any more. */
  void releaseUnused(List<LogicalStatement> statements) {
    List<Binding> r = retired;
    if (r == null) return;
    for (int i = r.size() - 1; i >= 0; i--) {
      Binding b = r.get(i);
      Connection c = b.connection();
      if (c == null || !holdsResults(statements, c)) {
        r.remove(i);
        if (c != null) {
          for (int k = statements.size() - 1; k >= 0; k--) statements.get(k).detach(c);
        }
        b.release(false);
      }
    }
    if (r.isEmpty()) retired = null;
  }

  /** Some statement still holds readable results on {@code c}: keep it aside, not released. */
  static boolean holdsResults(List<LogicalStatement> statements, Connection c) {
    for (int i = statements.size() - 1; i >= 0; i--) {
      if (statements.get(i).holdsResults(c)) return true;
    }
    return false;
  }

  /** Some open statement is bound to {@code c}. */
  static boolean inUse(List<LogicalStatement> statements, Connection c) {
    for (int i = statements.size() - 1; i >= 0; i--) {
      if (statements.get(i).boundTo(c)) return true;
    }
    return false;
  }

  /** Close: every binding goes back (the current one rolled back first when in a transaction). */
  void releaseAll(boolean autoCommit) {
    releaseAll(List.of(), autoCommit);
  }

  /**
   * Like {@link #releaseAll(boolean)}, closing first the physical statements that
   * {@code statements} still hold on the sessions (they were prepared on the sessions themselves,
   * not through the pool's proxies, which would have closed them).
   */
  void releaseAll(List<LogicalStatement> statements, boolean autoCommit) {
    List<Binding> r = retired;
    retired = null;
    if (r != null) {
      for (Object o : r.toArray()) {
        Binding b = (Binding) o;
        Connection c = b.connection();
        if (c != null) detachAll(statements, c);
        b.release(false);
      }
    }
    Binding b = current;
    Connection c = b == null ? null : b.connection();
    if (c == null) return;
    detachAll(statements, c);
    boolean dead = false;
    if (!autoCommit) {
      try {
        c.rollback();
      } catch (SQLException e) {
        dead = SqlStates.connectionDead(e);
      }
    }
    b.release(dead);
  }

  private static void detachAll(List<LogicalStatement> statements, Connection c) {
    for (int i = statements.size() - 1; i >= 0; i--) statements.get(i).detach(c);
  }

  /** Abort: every socket cut now, every binding evicted. */
  void abortAll() {
    List<Binding> r = retired;
    retired = null;
    if (r != null) {
      for (Object b : r.toArray()) ((Binding) b).abort();
    }
    Binding b = current;
    if (b != null) b.abort();
  }

  static boolean closedQuietly(Connection c) {
    try {
      return c.isClosed();
    } catch (SQLException e) {
      return true;
    }
  }
}
