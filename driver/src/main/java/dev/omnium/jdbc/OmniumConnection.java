package dev.omnium.jdbc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import org.postgresql.core.BaseConnection;

/**
 * The connection an application holds. Read-write work runs on one primary session, bound at
 * first use and kept until close, so session state behaves as with plain pgjdbc; when that
 * session is lost this connection is closed, as pgjdbc's would be (never silently rebound).
 * Read-only work ({@link #setReadOnly(boolean) setReadOnly(true)}) is routed when each
 * transaction starts (each statement in autocommit mode) to the least-loaded replica whose
 * effective lag is within {@code maxAge}, else to the capped fallback pool on the primary.
 *
 * <p>JDBC state (auto-commit, isolation, schema, network timeout, holdability, client info, type
 * map) and session settings set with SQL belong to this logical connection and are applied to
 * each session it binds; a pooled session is reset, or closed, before anyone else borrows it (see
 * docs/architecture.md, "A logical connection and pgjdbc").
 *
 * <p>Not thread-safe, like pgjdbc's connection: use it from one thread at a time, except for
 * {@link #close()} and {@link #abort(Executor)}, which any thread may call.
 */
public final class OmniumConnection extends LogicalConnectionBase {
  /** Client-info property carrying a write token (see {@link #requireWriteToken(String)}). */
  public static final String WRITE_TOKEN_CLIENT_INFO = "OmniumWriteToken";

  private static final VarHandle CLOSED_FIELD;

  static {
    try {
      CLOSED_FIELD = MethodHandles.lookup().findVarHandle(OmniumConnection.class, "closed",
          boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // A handle: a new getConnection() allocates this field and the base's two; the rest is state.
  /** Set once (CAS), by the close or abort that then gives back the sessions. */
  private volatile boolean closed;
  private final boolean view; // its state's pooled connection: open while a handle of it is

  /** Driver mode: a logical connection with a state of its own, never lent again. */
  OmniumConnection(Router router, PrimarySource primarySource, long maxAgeNanos,
                   boolean fallbackOnly) {
    this(new SessionState(router, primarySource, null), false);
    state.maxAgeNanos = maxAgeNanos;
    state.fallbackOnly = fallbackOnly;
  }

  /** A handle on {@code state} (new, or lent again by {@link OmniumDataSource}), or its view. */
  OmniumConnection(SessionState state, boolean view) {
    this.state = state;
    this.view = view;
    if (!view && state.home != null) state.handle = this;
  }

  /** The open handle this pooled connection acts for, or null. */
  private OmniumConnection lentHandle() {
    OmniumConnection h = state.handle;
    return h != null && !h.closed ? h : null;
  }

  /** Closed; a pooled connection while no handle of its state is open. */
  private boolean shut() { return closed || view && lentHandle() == null; }

  // ---------------------------------------------------------------- routing

  /** The session the next statement runs on, routing a read-only unit of work when it starts. */
  Connection beginStatement() throws SQLException {
    checkOpen();
    state.owner = Thread.currentThread(); // who may lend the state again at close
    if (!state.routesReads()) {
      state.router.primaryStatements.increment();
      return bindPrimary();
    }
    if (state.readTxLost != null) {
      throw PgjdbcErrors.sessionLost("omnium: the session of this read-only transaction was"
          + " lost; roll back and retry", state.readTxLost);
    }
    Connection c = routeRead();
    state.reads.current().statements++;
    return c;
  }

  /** Where a statement for {@code target} is created: a read session's pgjdbc connection. */
  Connection statementSession(Connection target) {
    Binding b = state.reads.current();
    return b != null && target == b.connection() ? b.session() : target;
  }

  /** Like {@link #beginStatement()} for describe-only calls, which do not count as statements. */
  @Override
  Connection currentTarget() throws SQLException {
    checkOpen();
    return state.routesReads() ? routeRead() : bindPrimary();
  }

  private Connection routeRead() throws SQLException {
    state.reads.releaseUnused(state.statements);
    long now = System.nanoTime();
    long mustSee = state.writes.requiredPosition(now);
    // PostgreSQL refuses serializable transactions on a standby: those reads use the fallback.
    boolean primaryOnly = state.fallbackOnly || state.isolation == TRANSACTION_SERIALIZABLE
        || state.sqlSettings.serializable();
    Connection bound = state.reads.connection();
    if (bound != null) {
      if (!state.autoCommit) return bound; // a transaction keeps its route until it ends
      // Autocommit: each statement is routed, but a binding that is still right is kept.
      if (state.reads.keep(now, state.maxAgeNanos, mustSee, primaryOnly)) return bound;
      state.reads.leave(state.statements, false);
    }
    state.reads.bindNew(now, state.maxAgeNanos, mustSee, primaryOnly, state);
    return afterBind();
  }

  /** An autocommit statement ran on the primary: record its commit if it may have written. */
  void afterAutocommitStatement(boolean changedRows, LogicalStatement s, String sql) {
    if (state.autoCommit && !state.routesReads() && state.writes.enabled()
        && (changedRows || s.mayWrite(sql))) {
      state.writes.committed();
    }
  }

  /** A statement's answer came back on {@code physical}: a replica pool hears of a promotion. */
  void answered(Connection physical) {
    Binding b = state.routesReads() ? state.reads.current() : null;
    if (b != null && b.route() == Route.REPLICA && physical == b.connection()) {
      // the session's own settings: no unwrap chain through the pool's proxy, no map look-up
      b.endpoint().answered(b);
    }
  }

  /** After a read bind: closed by another thread meanwhile, nothing may stay borrowed. */
  private Connection afterBind() throws SQLException {
    if (shut()) {
      state.reads.current().release(false);
      checkOpen();
    }
    return state.reads.connection();
  }

  /**
   * Called by a statement whose execution failed: the fallback session to retry on, or null (see
   * {@link ReadBindings#retryTarget}).
   */
  Connection retryTarget(SQLException e) throws SQLException {
    if (state.reads.retryTarget(e, state.statements, state) == null) return null;
    state.router.retries.increment();
    return afterBind();
  }

  /** After any statement error: a session that ended is evicted now, never silently rebound. */
  @Override
  void statementFailed(Connection physical, SQLException e) {
    if (physical == state.reads.connection() && SqlStates.connectionDead(e)) {
      if (!state.autoCommit) state.readTxLost = e; // the transaction is gone: never start another
      state.reads.leave(state.statements, true);
      return;
    }
    Binding p = state.primary;
    if (p != null && physical == p.connection()) checkPrimary(e);
  }

  /** A failed call on the primary: when its session is gone, this connection closes. */
  @Override
  SQLException checkPrimary(SQLException e) {
    Binding p = state.primary;
    Connection c = p == null ? null : p.connection();
    if (c != null && (SqlStates.connectionDead(e) || ReadBindings.closedQuietly(c))) {
      state.lost = e;
      closeQuietly(true);
    }
    return SqlStates.asConnectionLost(e);
  }

  private Connection bindPrimary() throws SQLException {
    Binding b = state.primary;
    Connection p = b == null ? null : b.connection();
    if (p != null) {
      if (p.isClosed()) {
        throw checkPrimary(PgjdbcErrors.connectionClosed("its primary session ended", null));
      }
      return b.quiet ? awake(b, p) : p;
    }
    try {
      p = state.primarySource.open();
    } catch (SQLException e) {
      throw SqlStates.asConnectionLost(e); // e.g. 57P03 while the primary restarts: class 08
    }
    if (b == null) {
      PrimarySource source = state.primarySource;
      state.primary = b = new Binding(state.router, source, source.isPooled());
    }
    b.bind(p, Route.PRIMARY, null);
    try {
      state.applyTo(b);
    } catch (SQLException e) {
      b.release(SqlStates.connectionDead(e));
      throw e;
    }
    if (shut()) {
      b.release(false);
      checkOpen();
    }
    return p;
  }

  /** A {@link Binding#quiet} primary session about to be used, woken. */
  private Connection awake(Binding b, Connection p) throws SQLException {
    try {
      b.wake(state.autoCommit);
    } catch (SQLException e) {
      throw checkPrimary(e);
    }
    return p;
  }

  @Override
  BaseConnection pgPrimary() throws SQLException {
    checkOpen();
    bindPrimary();
    Binding b = state.primary;
    b.handedOut = true;
    return b.session().unwrap(BaseConnection.class);
  }

  @Override
  BaseConnection pgRaw() throws SQLException {
    BaseConnection p = pgPrimary();
    state.rawUse(state.primary.connection());
    return p;
  }

  @Override
  BaseConnection pgCurrent() throws SQLException {
    Connection target = currentTarget();
    Binding p = state.primary;
    if (p != null && target == p.connection()) p.handedOut = true;
    return statementSession(target).unwrap(BaseConnection.class);
  }

  @Override
  BaseConnection pgBound() {
    Binding b = state.routesReads() ? state.reads.current() : state.primary;
    Connection c = b == null || b.connection() == null ? null : b.session();
    try {
      return c == null ? null : c.unwrap(BaseConnection.class);
    } catch (SQLException e) {
      return null;
    }
  }

  @Override
  Connection primaryConnection() {
    Binding b = state.primary;
    return b == null ? null : b.connection();
  }

  @Override Connection readConnection() { return state.reads.connection(); }

  /**
   * The bound primary session, unless it is {@link Binding#quiet}: idle with auto-commit on, so
   * that a commit, rollback or auto-commit change would be a no-op there. Else null.
   */
  private Connection activePrimary() {
    Binding b = state.primary;
    Connection p = b == null ? null : b.connection();
    return p == null || b.quiet ? null : p;
  }

  @Override
  boolean primaryInTransaction() throws SQLException {
    Connection p = activePrimary();
    return p != null && !state.autoCommit && PgTransactionState.inTransaction(p);
  }

  /** The primary's transaction is open and not failed: a COMMIT would commit it. */
  private boolean primaryTransactionOpen() throws SQLException {
    Connection p = activePrimary();
    return p != null && !state.autoCommit && PgTransactionState.isOpen(p);
  }

  @Override
  boolean readInTransaction() {
    return state.reads.inTransaction(state.autoCommit);
  }

  @Override
  void checkOpen() throws SQLException {
    if (!shut()) return;
    SQLException cause = state.lost;
    throw cause == null ? PgjdbcErrors.connectionClosed(null, null)
        : PgjdbcErrors.connectionClosed("its primary session was lost (" + cause.getMessage()
            + ")", cause);
  }

  /**
   * In autocommit mode a read binding is no longer needed once no open statement uses it: give it
   * back now, so idle logical connections never pin replica or (scarce) fallback sessions.
   */
  void statementClosed() {
    state.reads.statementClosed(state.statements, state.autoCommit);
  }

  /** The route of the current read-only binding, or null (for tests and diagnostics). */
  Route readRoute() { return state.reads.route(); }

  Router router() { return state.router; }

  @Override OmniumConnection self() { return this; }

  @Override
  void copied() {
    if (state.autoCommit && state.writes.enabled()) state.writes.committed();
  }
  @Override boolean closedHandle() { return shut(); }
  @Override Connection pooledConnection() {
    return view || closed || state.home == null ? null : state.pooled();
  }
  @Override Binding primaryBinding() { return state.primary; }
  @Override Binding readBinding() { return state.reads.current(); }
  @Override void leaveRead(boolean dead) { state.reads.leave(state.statements, dead); }
  @Override String database() { return state.router.config.database(); }
  @Override String applicationName() { return state.router.config.applicationName(); }

  /** A bound session if there is one, else the primary: for calls that need some session. */
  @Override
  Connection currentOrPrimary() throws SQLException {
    checkOpen();
    Connection c = readConnection();
    return c != null ? c : bindPrimary();
  }

  // ---------------------------------------------------------------- transactions

  /**
   * As pgjdbc's: turning auto-commit on commits the open transaction, the read-only one as
   * {@link #commit()} does.
   *
   * @throws SQLException as {@link #commit()} when that commit fails (auto-commit stays off then);
   *     08003 when closed
   */
  @Override
  public void setAutoCommit(boolean autoCommit) throws SQLException {
    checkOpen();
    if (state.autoCommit == autoCommit) return;
    if (autoCommit) refuseLostReadTransaction(); // it commits: auto-commit stays off then
    // pgjdbc commits an open transaction; a quiet session has none, and takes false when used
    Connection p = activePrimary();
    if (p != null) commitPrimary(p, true, autoCommit);
    if (readConnection() != null) {
      if (autoCommit && readInTransaction()) {
        endRead(true); // as commit(): a lost session is evicted, auto-commit stays off
      } else {
        state.reads.leave(state.statements, false); // the next unit of work: routed afresh
      }
    }
    state.readTxLost = null;
    state.autoCommit = autoCommit;
    if (autoCommit) state.transactionEnded(true); // its SQL settings hold from now on
  }

  @Override
  public boolean getAutoCommit() throws SQLException {
    checkOpen();
    return state.autoCommit;
  }

  /**
   * Commits the primary transaction and ends the read-only one (its session goes back once no
   * statement holds results on it).
   *
   * @throws SQLException 25P01 in autocommit mode; class 08 when a session was lost (the
   *     primary's: this connection is closed then, as with pgjdbc)
   */
  @Override
  public void commit() throws SQLException {
    checkOpen();
    if (state.autoCommit) {
      throw PgjdbcErrors.noActiveTransaction("Cannot commit when autoCommit is enabled.");
    }
    refuseLostReadTransaction();
    Connection p = activePrimary();
    if (p != null) commitPrimary(p, false, false);
    endRead(true);
    state.transactionEnded(true);
  }

  /** A read-only transaction whose session was lost at a statement is never committed. */
  private void refuseLostReadTransaction() throws SQLException {
    SQLException gone = state.readTxLost;
    if (gone == null) return;
    state.readTxLost = null;
    // 08003 as pgjdbc's closed connection; unlike it, the next unit of work may run again
    throw PgjdbcErrors.sessionLost("omnium: the session of this read-only transaction was"
        + " lost before commit", gone);
  }

  /**
   * commit(), or setAutoCommit({@code on}) when {@code viaAutoCommit}, on the primary session:
   * a commit of a transaction that may have written is remembered for read-your-writes.
   */
  private void commitPrimary(Connection p, boolean viaAutoCommit, boolean on)
      throws SQLException {
    boolean remember = (on || !viaAutoCommit) && state.writes.enabled() && primaryTransactionOpen();
    try {
      if (viaAutoCommit) {
        p.setAutoCommit(on);
      } else {
        p.commit();
      }
    } catch (SQLException e) {
      if (remember) state.writes.commitFailed(e);
      throw checkPrimary(e);
    }
    if (remember) state.writes.committed();
  }

  private void endRead(boolean commit) throws SQLException {
    Binding b = state.reads.current();
    if (b == null || b.connection() == null) return;
    // on pgjdbc's session itself: the pool's proxy would add a layer and a clock reading, and
    // nothing of it depends on this (its own rollback on return sees an idle session)
    Connection r = b.session();
    boolean dead = false;
    try {
      if (commit) {
        r.commit();
      } else {
        r.rollback();
      }
    } catch (SQLException e) {
      dead = SqlStates.connectionDead(e);
      throw e;
    } finally {
      state.reads.leave(state.statements, dead);
    }
  }

  @Override
  public void rollback() throws SQLException {
    checkOpen();
    if (state.autoCommit) {
      throw PgjdbcErrors.noActiveTransaction("Cannot rollback when autoCommit is enabled.");
    }
    state.readTxLost = null;
    Connection p = activePrimary();
    if (p != null) {
      try {
        p.rollback();
      } catch (SQLException e) {
        throw checkPrimary(e);
      }
    }
    state.transactionEnded(false);
    endRead(false);
  }

  /**
   * Read-only work is routed to replicas or the fallback pool from the next unit of work on.
   *
   * @param readOnly true to route read-only work away from the primary session
   * @throws SQLException 25001 inside a transaction, 08003 when closed
   */
  @Override
  public void setReadOnly(boolean readOnly) throws SQLException {
    checkOpen();
    if (state.readOnly == readOnly) return;
    if (readInTransaction() || primaryInTransaction()) {
      throw PgjdbcErrors.activeTransaction("Cannot change transaction read-only property in the"
          + " middle of a transaction.");
    }
    if (!readOnly) state.reads.leave(state.statements, false);
    state.readOnly = readOnly;
  }

  @Override
  public boolean isReadOnly() throws SQLException {
    checkOpen();
    return state.readOnly;
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Asks the bound sessions, or with none the primary's (bound for it, as pgjdbc asks the server)
   * unless the primary answered this router within two heartbeat intervals (rule 7).
   *
   * @param timeout seconds, 0 for none
   * @return whether every bound session answers; false once closed or its primary session lost
   * @throws SQLException 22023 for a negative timeout
   */
  @Override
  public boolean isValid(int timeout) throws SQLException {
    if (timeout < 0) throw PgjdbcErrors.invalidParameter("Invalid timeout (" + timeout + "<0).");
    if (shut()) return false;
    Connection p = primaryConnection();
    Connection r = readConnection();
    if (p == null && r == null && !state.router.primaryAnsweredRecently(System.nanoTime())) {
      try { p = currentOrPrimary(); } catch (SQLException unreachable) { return false; }
    }
    Binding pb = state.primary;
    if (p != null && pb.quiet) { // pgjdbc's check begins a transaction when auto-commit is off
      try {
        awake(pb, p);
      } catch (SQLException e) {
        return false;
      }
    }
    if (p != null && !p.isValid(timeout)) {
      checkPrimary(new SQLException("omnium: the primary session does not answer", "08006"));
      return false;
    }
    return r == null || r.isValid(timeout);
  }

  /**
   * True once closed, including when the primary session was lost (as with pgjdbc).
   *
   * @return whether this connection can no longer be used
   */
  @Override
  public boolean isClosed() {
    if (shut()) return true;
    Connection p = primaryConnection();
    return p != null && ReadBindings.closedQuietly(p);
  }

  /**
   * Closes its statements, rolls back, and gives back or closes its sessions; each exactly
   * once, whichever thread closes or aborts. Idempotent. In DataSource mode, a connection closed
   * on the thread that got it (or ran its last statement) lends its reset state to a later
   * {@code getConnection()}; this object then keeps answering as a closed connection, with 08003
   * for every call that needs one open.
   */
  @Override
  public void close() throws SQLException {
    closeQuietly(false);
  }

  private void closeQuietly(boolean primaryLost) {
    if (view) { // closing what a handle unwrapped to closes the handle, as pgjdbc's pool does
      OmniumConnection h = lentHandle();
      if (h != null) h.closeQuietly(primaryLost);
      return;
    }
    SessionState s = state;
    // A lost session leaves its statements open, as pgjdbc's do: they fail with 08003 at
    // execute. So does a later close(), e.g. the application pool's eviction on its own thread
    // (HikariCP closes an evicted pgjdbc connection, which keeps its statements open too).
    if (!primaryLost && s.lost == null && !s.statements.isEmpty()) {
      Object[] open = s.statements.toArray(); // may race a statement closing on another thread
      for (int i = open.length - 1; i >= 0; i--) {
        if (open[i] != null) ((LogicalStatement) open[i]).closeQuietly();
      }
    }
    if (closed || !CLOSED_FIELD.compareAndSet(this, false, true)) return;
    // only the driver's connections join (RouterRegistry): a DataSource's handle would pay an
    // identity hash and a map look-up per transaction for nothing
    if (s.home == null) s.router.use.leave(this);
    // statements closed above hold nothing; those left open must not keep pooled sessions' ones
    s.reads.releaseAll(primaryLost ? s.statements : List.of(), s.autoCommit);
    Binding p = s.primary;
    Connection pc = p == null ? null : p.connection();
    if (pc != null) {
      boolean dead = primaryLost;
      if (!dead && !s.autoCommit && !p.quiet) {
        try {
          pc.rollback();
        } catch (SQLException e) {
          dead = SqlStates.connectionDead(e);
        }
      }
      p.release(dead);
    }
    // DataSource mode: the state is lent again once nothing of this handle remains in it. Only
    // a close on the thread that got the connection, or ran its last statement, lends it: a
    // close racing a call on another thread (an abort, a watchdog, a hand-off) leaves the state
    // to this handle alone.
    OmniumDataSource home = s.home;
    if (home != null && !primaryLost && s.lost == null && s.owner == Thread.currentThread()) {
      s.statements.clear(); // each was closed above
      if (s.idle()) {
        state = home.closedState();
        home.recycle(s);
      }
    }
  }

  /**
   * Cuts every bound session's socket now, on the calling thread, and evicts them.
   *
   * @param executor required by JDBC; the sockets are closed before this returns
   * @throws SQLException without SQLState when {@code executor} is null, as pgjdbc's
   */
  @Override
  public void abort(Executor executor) throws SQLException {
    if (executor == null) throw PgjdbcErrors.abortWithoutExecutor();
    if (view) { // aborting what a handle unwrapped to aborts the handle
      OmniumConnection h = lentHandle();
      if (h != null) h.abort(executor);
      return;
    }
    if (closed || !CLOSED_FIELD.compareAndSet(this, false, true)) return;
    if (state.home == null) state.router.use.leave(this);
    state.reads.abortAll();
    Binding p = state.primary;
    if (p != null) p.abort();
  }

  // ---------------------------------------------------------------- JDBC 4.3 request boundaries

  @Override public void beginRequest() throws SQLException { checkOpen(); }

  /** The end of a request frees the read binding, as a pool would on return. */
  @Override
  public void endRequest() throws SQLException {
    if (shut()) return;
    if (readConnection() != null && state.autoCommit) state.reads.leave(state.statements, false);
  }

  @Override
  public String toString() {
    Route r = readRoute();
    return "OmniumConnection[" + state.router.config.applicationName()
        + (state.readOnly ? ", read-only" : "") + (r != null ? ", bound to " + r : "")
        + (primaryConnection() != null ? ", primary bound" : "") + (shut() ? ", closed" : "") + "]";
  }
}
