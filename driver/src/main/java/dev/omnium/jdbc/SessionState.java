package dev.omnium.jdbc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executor;

/**
 * Everything a logical connection keeps between calls, apart from its handle
 * ({@link OmniumConnection}, new per {@code getConnection()}): the JDBC state (auto-commit,
 * isolation, schema, catalog, network timeout, holdability, client info, type map), answered by
 * the getters without a round trip and applied in full to each session the connection binds; its
 * bindings, statements and read-your-writes. {@link Binding} records which bits it applied, so a
 * pooled session is reset on return the HikariCP way: only what changed.
 *
 * <p>In DataSource mode the state outlives its handle, as HikariCP's {@code PoolEntry} outlives
 * its {@code ProxyConnection}: once the handle closed cleanly on its own thread (see
 * {@link #owner}), the state is {@link #reset} to what a new one holds and lent to a later
 * {@code getConnection()} (see {@link OmniumDataSource}); the closed handle keeps its data
 * source's closed state, which is bound to nothing and never set.
 */
final class SessionState {
  static final int UNSET = -1;

  static final int ISOLATION = 1;
  static final int SCHEMA = 1 << 1;
  static final int NETWORK_TIMEOUT = 1 << 2;
  static final int HOLDABILITY = 1 << 3;
  static final int CLIENT_INFO = 1 << 4;
  static final int TYPE_MAP = 1 << 5;
  /** Server-side settings: undone with one RESET ALL. */
  static final int NEEDS_SQL_RESET = ISOLATION | SCHEMA | CLIENT_INFO;

  final Router router;
  final PrimarySource primarySource;
  /** The data source that lends this state again after close, or null (driver mode). */
  final OmniumDataSource home;
  /** The read side: current binding and those left with open results. */
  final ReadBindings reads;
  /** Read-your-writes: what this connection committed, and what its reads must see. */
  final ConnectionWrites writes;
  final ArrayList<LogicalStatement> statements = new ArrayList<>(4); // 4: most hold one or two
  /** The primary session: bound at first read-write use, kept until close. */
  volatile Binding primary;
  /** Set when a read-only transaction's session died: its statements fail until rollback. */
  SQLException readTxLost;
  /** Why the connection closed itself: its primary session was lost (never lent again then). */
  volatile SQLException lost;
  /** The staleness read-only work accepts, from the next unit of work on. */
  long maxAgeNanos;
  boolean readOnly;
  /** What read-only routes: pgjdbc's {@code readOnlyMode} of the configuration. */
  final ConnectionDefaults.ReadOnlyMode readOnlyMode;
  /** The fetch size of statements that set none (pgjdbc's {@code defaultRowFetchSize}). */
  int defaultFetchSize;
  /** Reads never go to a replica ({@link OmniumDataSource#readWithRetry}'s second run). */
  boolean fallbackOnly;
  /** The state closed handles share once theirs went back: bound to nothing, never routed. */
  final boolean ofClosedHandles;
  /**
   * The thread that got the current handle, or ran its last statement: only a close on it lends
   * the state again.
   */
  Thread owner;
  /** The session settings set with SQL: replayed on every session bound. */
  final SqlSettings sqlSettings = new SqlSettings();
  /** DataSource mode: the handle this state is lent to now, or null (not lent). */
  OmniumConnection handle;
  /** DataSource mode: what its handles unwrap to as a {@code Connection}; made at the first. */
  private OmniumConnection pooled;
  /** The session the pending settings of the current transaction ran on. */
  private Binding pendingOn;
  /**
   * The last SQL string found to leave nothing on its session ({@link #sessionEffect}): an
   * application runs the same few strings again and again, and most leave nothing.
   */
  private String plainSql;

  boolean autoCommit = true;
  int isolation = UNSET;
  String schema;
  int networkTimeout = UNSET;
  Executor networkTimeoutExecutor;
  int holdability = UNSET;
  Properties clientInfo;
  Map<String, Class<?>> typeMap;
  /** Which of the values above the application set: 0 on the hot path, so apply costs nothing. */
  int set;

  /**
   * @param home the data source that lends this state again, or null (driver mode, and the
   *     state a closed handle keeps)
   */
  SessionState(Router router, PrimarySource primarySource, OmniumDataSource home) {
    this(router, primarySource, home, false);
  }

  private SessionState(Router router, PrimarySource primarySource, OmniumDataSource home,
                       boolean ofClosedHandles) {
    this.router = router;
    this.primarySource = primarySource;
    this.home = home;
    this.ofClosedHandles = ofClosedHandles;
    this.maxAgeNanos = router.defaultMaxAgeNanos;
    this.readOnlyMode = router.config.defaults.readOnlyMode;
    this.readOnly = router.config.defaults.readOnly;
    this.defaultFetchSize = router.config.defaults.defaultRowFetchSize;
    this.reads = new ReadBindings(router, primarySource);
    this.writes = new ConnectionWrites(router.writePositions);
  }

  /** What the closed handles of one data source keep once their state was lent again. */
  static SessionState ofClosedHandles(Router router) {
    return new SessionState(router, router.primary(), null, true);
  }

  /**
   * Whether a closed handle's state holds nothing any more: no session bound or set aside, no
   * statement open. Only such a state is lent again.
   */
  boolean idle() {
    Binding p = primary;
    // a handle answers lastWriteToken() after close: only a state that recorded no write and
    // was given no token is lent again, so its ConnectionWrites is as new
    return statements.isEmpty() && reads.idle() && (p == null || p.connection() == null)
        && !writes.remembersAny();
  }

  /**
   * Back to what a new state holds, for the next handle; drops every reference to the previous
   * user's objects (client info, type map, executor, sessions' records).
   */
  void reset() {
    readTxLost = null;
    lost = null;
    readOnly = router.config.defaults.readOnly;
    defaultFetchSize = router.config.defaults.defaultRowFetchSize;
    owner = null;
    handle = null;
    reads.clear();
    Binding p = primary;
    if (p != null) p.clear();
    autoCommit = true;
    isolation = UNSET;
    schema = null;
    networkTimeout = UNSET;
    networkTimeoutExecutor = null;
    holdability = UNSET;
    clientInfo = null;
    typeMap = null;
    set = 0;
    sqlSettings.clear();
    pendingOn = null;
  }

  /**
   * The connection this state stands for in a pool, what its handles unwrap to as a
   * {@code Connection} (as HikariCP's and pgjdbc's own pooled handles unwrap to their physical
   * connection): one object for every handle lent this state, so that what is cached per
   * connection (an OpenTelemetry agent's description of the database) is found again.
   */
  OmniumConnection pooled() {
    OmniumConnection p = pooled;
    if (p == null) pooled = p = new OmniumConnection(this, true);
    return p;
  }

  /**
   * Whether the next statement is read-only work, routed away from the primary: a read-only
   * connection's, unless {@code readOnlyMode} leaves it to the primary (always for {@code ignore},
   * in autocommit mode for {@code transaction}).
   */
  boolean routesReads() {
    return readOnly && (readOnlyMode == ConnectionDefaults.ReadOnlyMode.ALWAYS
        || readOnlyMode == ConnectionDefaults.ReadOnlyMode.TRANSACTION && !autoCommit);
  }

  /**
   * Applies the logical state to a session just bound: the JDBC values, then the settings set
   * with SQL ({@link SqlSettings#replayOn}, in autocommit), then auto-commit.
   */
  void applyTo(Binding b) throws SQLException {
    Connection c = b.connection();
    boolean lent = b.route().lentAutoCommit;
    int s = set;
    if (s != 0) {
      if ((s & ISOLATION) != 0 && isolation != Connection.TRANSACTION_READ_COMMITTED) {
        apply(b, c, ISOLATION);
      }
      if ((s & SCHEMA) != 0) apply(b, c, SCHEMA);
      if ((s & NETWORK_TIMEOUT) != 0) apply(b, c, NETWORK_TIMEOUT);
      if ((s & HOLDABILITY) != 0) apply(b, c, HOLDABILITY);
      if ((s & CLIENT_INFO) != 0) apply(b, c, CLIENT_INFO);
      if ((s & TYPE_MAP) != 0) apply(b, c, TYPE_MAP);
    }
    if (b.perTransaction != null) {
      b.carried = sqlSettings; // behind a pooler: in each transaction, nothing on the session
    } else if (!sqlSettings.isEmpty()) {
      if (!lent) c.setAutoCommit(lent = true); // the replay is no part of the unit of work
      b.saw(SessionEffect.SETTING);
      sqlSettings.replayOn(b.session(), b.route(), b.pinned());
    }
    if (autoCommit != lent) c.setAutoCommit(autoCommit);
  }

  /**
   * Whether the kept primary session {@code p}, its warnings just cleared, may be
   * {@link Binding#quiet}: pgjdbc's, auto-commit on, no transaction, no open statement that
   * could still run SQL there (an updatable result set), no pgjdbc object of it handed out (SQL
   * could run there unseen).
   */
  boolean mayQuiet(Binding p) {
    if (!autoCommit || p.handedOut || p.effect >= SessionEffect.UNSURE) return false;
    for (int i = statements.size() - 1; i >= 0; i--) {
      if (!statements.get(i).closed) return false;
    }
    return PgTransactionState.idleOn(p.session());
  }

  /** {@link SessionEffect#of}, remembered for the last string that leaves nothing. */
  int sessionEffect(String sql) {
    if (sql == plainSql) return SessionEffect.NONE;
    int effect = SessionEffect.of(sql);
    if (effect == SessionEffect.NONE) plainSql = sql;
    return effect;
  }

  /** The bound session {@code target} is, when it is this state's current one; else null. */
  Binding bindingOf(Connection target) {
    Binding b = routesReads() ? reads.current() : primary;
    return b != null && b.connection() == target ? b : null;
  }

  /**
   * Before {@code s} runs SQL on {@code target}: what the SQL may leave there marks the session
   * (reset, checked or closed before a pool lends it again); raw SQL that may end or rewind a
   * transaction makes its pending settings unsure. Returns the SQL's {@link SessionEffect}.
   */
  int beforeStatement(Connection target, LogicalStatement s, String sql) {
    int effect = s.sessionEffect(sql);
    if (effect == SessionEffect.NONE && !sqlSettings.hasPending()) return effect;
    Binding b = bindingOf(target);
    if (b != null) b.saw(effect);
    String text = s.sqlOf(sql);
    if (sqlSettings.hasPending() && (text == null || SessionEffect.endsOrRewinds(text))) {
      sqlSettings.rewound();
    }
    return effect;
  }

  /** pgjdbc's own objects of {@code target} were handed out: SQL may run there unseen. */
  void rawUse(Connection target) {
    Binding b = bindingOf(target);
    if (b != null) b.saw(SessionEffect.UNSURE);
  }

  /**
   * SQL that sets session settings succeeded on {@code target}: recorded when it took effect
   * (outside a transaction), or when its transaction commits, then applied to the other session
   * bound, as one pgjdbc session would have them all.
   */
  void settingsRan(Connection target, String sql, ParameterLog params) throws SQLException {
    Binding b = bindingOf(target);
    List<SqlSetting> changes = SqlSetting.parse(sql);
    if (changes == null) { // not recordable with certainty: never lent without a check
      if (b != null) b.saw(SessionEffect.UNSURE);
      return;
    }
    if (params != null) changes.replaceAll(c -> c.withParams(params.copy()));
    Connection session = b != null ? b.session() : target;
    PinnedSettings pinned = b == null ? null : b.pinned();
    if (pinned != null) SqlSettings.restore(session, changes, pinned);
    if (!autoCommit || PgTransactionState.inTransactionOn(session)) {
      sqlSettings.pend(changes);
      pendingOn = b;
    } else {
      adopt(changes, b);
    }
  }

  /** A transaction ended: its settings hold once it committed. */
  void transactionEnded(boolean committed) throws SQLException {
    if (!sqlSettings.hasPending()) return;
    Binding ranOn = pendingOn;
    pendingOn = null;
    List<SqlSetting> changes = sqlSettings.transactionEnded(committed);
    if (changes != null) adopt(changes, ranOn);
  }

  /**
   * Records changes and applies them to every bound session but {@code ranOn}; a JDBC value they
   * replace (search_path for the schema, the default isolation) is no longer applied.
   */
  private void adopt(List<SqlSetting> changes, Binding ranOn) throws SQLException {
    sqlSettings.record(changes);
    if (SqlSettings.touches(changes, "search_path")) {
      set &= ~SCHEMA;
      schema = null;
    }
    if (SqlSettings.touches(changes, "default_transaction_isolation")) {
      set &= ~ISOLATION;
      isolation = UNSET;
    }
    // As a JDBC setter: the primary's failure fails the call, a read session that cannot take
    // them is given back (the next unit of work binds afresh, with every setting).
    Binding p = primary;
    // behind a pooler a session carries them from its next transaction on (Binding.carried)
    if (p != null && p != ranOn && p.connection() != null && p.carried == null) {
      p.wake(autoCommit);
      replay(p, changes);
    }
    Binding r = reads.current();
    if (r != null && r != ranOn && r.connection() != null && r.carried == null) {
      try {
        replay(r, changes);
      } catch (SQLException e) {
        if (reads.inTransaction(autoCommit)) throw e;
        reads.leave(statements, SqlStates.connectionDead(e));
      }
    }
  }

  private void replay(Binding b, List<SqlSetting> changes) throws SQLException {
    Connection c = b.connection();
    b.saw(SessionEffect.SETTING);
    boolean ac = c.getAutoCommit();
    if (!ac) c.setAutoCommit(true); // no transaction is open on it (setReadOnly refuses then)
    try {
      SqlSettings.replayChanges(b.session(), changes, b.route(), b.pinned());
    } finally {
      if (!ac) c.setAutoCommit(false);
    }
  }

  /** Applies one value to a bound session, remembering what to undo. */
  void apply(Binding b, Connection c, int bit) throws SQLException {
    switch (bit) {
      case ISOLATION:
        c.setTransactionIsolation(isolation);
        break;
      case SCHEMA:
        c.setSchema(schema);
        break;
      case NETWORK_TIMEOUT:
        // 0 ("none", which HikariCP sets back) keeps the route's own bound: nothing to change
        if (networkTimeout <= 0 && (b.applied & NETWORK_TIMEOUT) == 0) return;
        if ((b.applied & NETWORK_TIMEOUT) == 0) b.networkTimeoutBefore = c.getNetworkTimeout();
        c.setNetworkTimeout(networkTimeoutExecutor,
            effectiveNetworkTimeout(networkTimeout, b.networkTimeoutBefore));
        break;
      case HOLDABILITY:
        if ((b.applied & HOLDABILITY) == 0) b.holdabilityBefore = c.getHoldability();
        c.setHoldability(holdability);
        break;
      case CLIENT_INFO:
        // name by name: pgjdbc's setClientInfo(Properties) would blank an ApplicationName not in it
        for (String name : clientInfo.stringPropertyNames()) {
          c.setClientInfo(name, clientInfo.getProperty(name));
        }
        break;
      case TYPE_MAP:
        if ((b.applied & TYPE_MAP) == 0) b.typeMapBefore = c.getTypeMap();
        c.setTypeMap(typeMap);
        break;
      default:
        throw new IllegalArgumentException("bit " + bit);
    }
    b.applied |= bit;
  }

  /**
   * The socket timeout a session gets: a JDBC value of 0 ("none", which HikariCP restores when
   * it read 0) never removes the route's own bound, and a larger value never lengthens it.
   */
  static int effectiveNetworkTimeout(int requested, int routeOwn) {
    if (routeOwn <= 0) return requested;
    return requested <= 0 ? routeOwn : Math.min(requested, routeOwn);
  }

  int holdability() {
    // pgjdbc's default: result sets close at commit
    return holdability == UNSET ? ResultSet.CLOSE_CURSORS_AT_COMMIT : holdability;
  }

  int networkTimeout() {
    return networkTimeout == UNSET ? 0 : networkTimeout;
  }

  Map<String, Class<?>> typeMap() {
    return typeMap != null ? typeMap : new HashMap<>();
  }

  Properties clientInfoCopy() {
    Properties p = new Properties();
    if (clientInfo != null) p.putAll(clientInfo);
    return p;
  }

  /** Records one client-info value; false when nothing changed. */
  boolean putClientInfo(String name, String value) {
    Properties p = clientInfo != null ? clientInfo : new Properties();
    String old = p.getProperty(name);
    if (value == null) {
      p.remove(name);
    } else {
      p.setProperty(name, value);
    }
    clientInfo = p;
    set |= CLIENT_INFO;
    return value == null ? old != null : !value.equals(old);
  }

  void putClientInfo(Properties properties) {
    Properties p = new Properties();
    if (properties != null) p.putAll(properties);
    clientInfo = p;
    set |= CLIENT_INFO;
  }

  // ---------------------------------------------------------------- recycled parameter log

  /**
   * The emptied log of the last prepared statement closed on this state, for the next one; or
   * null. It survives {@link #reset()}: it holds no value, and in DataSource mode it is what lets
   * the next connection's statement allocate no log.
   */
  private volatile ParameterLog spareLog;

  /**
   * A parameter log for a new prepared statement: the spare one when there is one (taken with a
   * compare-and-set: two threads preparing at once must never share one), else a new one.
   */
  ParameterLog takeParameterLog() {
    ParameterLog log = spareLog;
    return log != null && SPARE_LOG.compareAndSet(this, log, null) ? log : new ParameterLog();
  }

  /** A closed statement's log: emptied and kept for the next statement when small enough. */
  void recycle(ParameterLog log) {
    if (log.recycle()) SPARE_LOG.setRelease(this, log);
  }

  private static final VarHandle SPARE_LOG;

  static {
    try {
      SPARE_LOG = MethodHandles.lookup()
          .findVarHandle(SessionState.class, "spareLog", ParameterLog.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
