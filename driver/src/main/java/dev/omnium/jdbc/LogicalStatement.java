package dev.omnium.jdbc;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import org.postgresql.PGStatement;
import org.postgresql.jdbc.PgStatement;

/**
 * A statement on the logical connection. It holds no physical statement until it executes, and
 * re-creates its physical statement with the same settings whenever the connection's binding has
 * changed, so it keeps working across routes (docs/routing-contract.md, rule 3). It is a
 * {@link PGStatement} too, as pgjdbc's statements are: its settings are applied to each physical
 * statement, its answers come from the one that executed.
 */
class LogicalStatement implements Statement, PGStatement {
  static final int UNSET = -1;

  // operations, so one routine can execute, retry and count every execute* variant
  static final int QUERY = 0;
  static final int EXECUTE = 1;
  static final int UPDATE = 2;
  static final int LARGE_UPDATE = 3;
  static final int BATCH = 4;
  static final int LARGE_BATCH = 5;

  final OmniumConnection conn;

  Statement physical;
  private Connection owner;
  /** What a prepared physical statement's SQL starts with (TransactionSettings), or null. */
  private String physicalPrefix;
  private ResultSetProxy lastResultSet;
  /** Volatile: a statement may be closed on another thread (a cleaner), see {@link #close()}. */
  volatile boolean closed;

  // what it was created with and options set since, re-applied to every new physical
  // statement; a shared instance until an option is set
  StatementSettings settings;

  /** The pending batch: SQL strings, or a prepared statement's parameter snapshots. */
  ArrayList<Object> batch;

  // primitive results of the last execute: fields, so no execute boxes a primitive (a batch's
  // array is what run returns)
  boolean boolResult;
  long longResult;
  /** The application's execute* calls so far (a retry of one is not another). */
  int executions;

  LogicalStatement(OmniumConnection conn, int resultSetType, int resultSetConcurrency,
      int resultSetHoldability) {
    this(conn, StatementSettings.of(resultSetType, resultSetConcurrency, resultSetHoldability,
        UNSET, null, null));
  }

  LogicalStatement(OmniumConnection conn, StatementSettings settings) {
    this.conn = conn;
    SessionState state = conn.state;
    int fetchSize = state.defaultFetchSize; // as pgjdbc: the connection's, when created
    if (fetchSize != state.router.config.defaults.defaultRowFetchSize) {
      settings = settings.writable();
      settings.fetchSize = fetchSize;
    }
    this.settings = settings;
  }

  /**
   * The statement a metadata result set answers, as pgjdbc's does: one of the logical connection
   * (not registered: it holds no route), over the physical statement that ran the query.
   */
  static LogicalStatement ofMetaData(OmniumConnection conn, Statement physical) {
    LogicalStatement s = new LogicalStatement(conn, StatementSettings.DEFAULTS);
    s.physical = physical;
    return s;
  }

  // ---------------------------------------------------------------- physical statement lifecycle

  final Statement physicalFor(Connection target) throws SQLException {
    return physicalFor(target, null);
  }

  /**
   * The physical statement on {@code target}; a prepared statement's SQL after {@code prefix}
   * (the settings a transaction starts with behind a pooler, {@link TransactionSettings}).
   */
  final Statement physicalFor(Connection target, String prefix) throws SQLException {
    Statement s = physical;
    if (s != null && owner == target && physicalPrefix == prefix) return s;
    if (s != null) closePhysical();
    s = prefix == null ? create(conn.statementSession(target))
        : create(conn.statementSession(target), prefix);
    physical = s;
    owner = target;
    physicalPrefix = prefix;
    applySettings(s);
    return s;
  }

  /** A prepared statement's physical statement for its SQL after {@code prefix}. */
  Statement create(Connection target, String prefix) throws SQLException {
    return create(target);
  }

  /**
   * Runs {@code s} once, with {@code sql} (a statement's, after a prefix) or its prepared SQL and
   * parameters; pgjdbc's {@code execute()}: whether the first result is a result set.
   */
  boolean executeWith(Statement s, String sql) throws SQLException {
    return s.execute(sql);
  }

  Statement create(Connection target) throws SQLException {
    StatementSettings f = settings;
    return f.holdability == UNSET
        ? target.createStatement(f.type, f.concurrency)
        : target.createStatement(f.type, f.concurrency, f.holdability);
  }

  private void applySettings(Statement s) throws SQLException {
    settings.applyTo(s);
  }

  final boolean boundTo(Connection physicalConnection) {
    return physical != null && owner == physicalConnection;
  }

  /**
   * Whether this statement still holds results on {@code c} that pgjdbc would let the
   * application read: an open result set, or a callable statement's OUT values.
   */
  final boolean holdsResults(Connection c) {
    Statement s = physical;
    if (s == null || owner != c) return false;
    if (this instanceof CallableStatement) return true;
    try {
      ResultSet rs = s.getResultSet(); // pgjdbc answers from memory
      return rs != null && !rs.isClosed();
    } catch (SQLException e) {
      return false;
    }
  }

  /** The connection released the physical connection this statement was created on. */
  final void detach(Connection physicalConnection) {
    if (owner == physicalConnection) closePhysical();
  }

  private void closePhysical() {
    Statement s = physical;
    physical = null;
    owner = null;
    physicalPrefix = null;
    lastResultSet = null;
    if (s != null) {
      try {
        s.close();
      } catch (SQLException | RuntimeException ignored) {
        // its connection may be gone already
      }
    }
  }

  final void closeQuietly() {
    closed = true;
    closePhysical();
  }

  /**
   * As pgjdbc's statements: only the statement's own state is checked. Setters and getters keep
   * working after the connection closed or lost its session; execution fails then with 08003.
   */
  final void checkOpen() throws SQLException {
    if (closed) throw PgjdbcErrors.statementClosed();
  }

  // ---------------------------------------------------------------- execution

  /**
   * Runs one execute* call: route, (re)create the physical statement, execute; on a replica
   * recovery conflict at the first statement of a read-only unit of work, once more on the
   * fallback route. Returns the result set, the batch's counts, or null.
   */
  final Object run(int op, String sql, int keys, int[] columnIndexes, String[] columnNames)
      throws SQLException {
    if (op < BATCH) return runOnce(op, sql, keys, columnIndexes, columnNames);
    try {
      return runOnce(op, sql, keys, columnIndexes, columnNames);
    } finally {
      batchDone(); // JDBC and pgjdbc empty a batch whatever the outcome
    }
  }

  private Object runOnce(int op, String sql, int keys, int[] columnIndexes,
                            String[] columnNames) throws SQLException {
    checkOpen();
    lastResultSet = null;
    executions++;
    Connection target = conn.beginStatement();
    int effect = conn.state.beforeStatement(target, this, sql);
    if (Tracing.ON) Tracing.statement(bindingOf(target));
    Object rs;
    try {
      rs = execOn(target, op, sql, keys, columnIndexes, columnNames);
      conn.answered(target);
      conn.afterAutocommitStatement(op != QUERY && !(op == EXECUTE && boolResult), this, sql);
    } catch (SQLException first) {
      String from = Tracing.ON ? Tracing.where(bindingOf(target)) : null;
      Connection retry = canReplay() ? conn.retryTarget(first) : null;
      if (retry == null) {
        conn.statementFailed(target, first);
        throw SqlStates.asConnectionLost(first);
      }
      target = retry;
      effect = conn.state.beforeStatement(retry, this, sql);
      if (Tracing.ON) Tracing.retried(from, first, bindingOf(retry));
      try {
        rs = execOn(retry, op, sql, keys, columnIndexes, columnNames);
      } catch (SQLException second) {
        second.addSuppressed(first);
        conn.statementFailed(retry, second);
        throw SqlStates.asConnectionLost(second);
      }
    }
    if (effect == SessionEffect.SETTING) recordSettings(target, sql);
    return rs;
  }

  /**
   * SQL that sets session settings ran on {@code target}: the logical connection records them
   * ({@code sql}, or each string of this statement's batch when null).
   */
  void recordSettings(Connection target, String sql) throws SQLException {
    if (sql != null) {
      conn.state.settingsRan(target, sql, null);
      return;
    }
    ArrayList<Object> b = batch;
    for (int i = 0; b != null && i < b.size(); i++) {
      String each = (String) b.get(i);
      if (SessionEffect.of(each) == SessionEffect.SETTING) {
        conn.state.settingsRan(target, each, null);
      }
    }
  }

  /** The binding whose session {@code target} is: the read binding, else the primary's. */
  private Binding bindingOf(Connection target) {
    Binding b = conn.readBinding();
    return b != null && b.connection() == target ? b : conn.primaryBinding();
  }

  /** Executes on {@code target}, with its transaction's settings where a pooler needs them. */
  private Object execOn(Connection target, int op, String sql, int keys, int[] columnIndexes,
      String[] columnNames) throws SQLException {
    Binding b = bindingOf(target);
    TransactionSettings t = b == null || b.connection() != target ? null : b.perTransaction;
    return t == null ? exec(physicalFor(target), op, sql, keys, columnIndexes, columnNames)
        : t.exec(b, this, target, op, sql, keys, columnIndexes, columnNames);
  }

  /** After executeBatch, whatever its outcome, and on clearBatch(): the batch is empty. */
  void batchDone() {
    if (batch != null) batch.clear();
  }

  /** Read-your-writes: whether {@code sql} (this statement's own SQL when null) may write. */
  boolean mayWrite(String sql) {
    return StatementKind.mayWrite(sql);
  }

  /** The SQL an execute runs: {@code sql}, or null for this statement's batch. */
  String sqlOf(String sql) {
    return sql;
  }

  /** What {@code sql} (this statement's batch when null) may leave on its session. */
  int sessionEffect(String sql) {
    if (sql != null) return conn.state.sessionEffect(sql);
    int effect = SessionEffect.NONE;
    ArrayList<Object> b = batch;
    for (int i = 0; b != null && i < b.size(); i++) {
      effect = Math.max(effect, SessionEffect.of((String) b.get(i)));
    }
    return effect;
  }

  /** False when a retry could not resend the same input (a stream already consumed). */
  boolean canReplay() {
    return true;
  }

  /** Executes on a physical statement: returns the result set or the batch's counts, or null. */
  Object exec(Statement s, int op, String sql, int keys, int[] columnIndexes,
      String[] columnNames)
      throws SQLException {
    switch (op) {
      case QUERY:
        return wrap(s.executeQuery(sql));
      case EXECUTE:
        boolResult = keys != UNSET ? s.execute(sql, keys)
            : columnIndexes != null ? s.execute(sql, columnIndexes)
            : columnNames != null ? s.execute(sql, columnNames)
            : s.execute(sql);
        return null;
      case UPDATE:
        longResult = keys != UNSET ? s.executeUpdate(sql, keys)
            : columnIndexes != null ? s.executeUpdate(sql, columnIndexes)
            : columnNames != null ? s.executeUpdate(sql, columnNames)
            : s.executeUpdate(sql);
        return null;
      case LARGE_UPDATE:
        longResult = keys != UNSET ? s.executeLargeUpdate(sql, keys)
            : columnIndexes != null ? s.executeLargeUpdate(sql, columnIndexes)
            : columnNames != null ? s.executeLargeUpdate(sql, columnNames)
            : s.executeLargeUpdate(sql);
        return null;
      case BATCH:
      case LARGE_BATCH:
        s.clearBatch();
        if (batch != null) {
          for (Object b : batch) s.addBatch((String) b);
        }
        return op == BATCH ? s.executeBatch() : s.executeLargeBatch();
      default:
        throw new IllegalStateException("unknown operation " + op);
    }
  }

  final ResultSet wrap(ResultSet rs) {
    if (rs == null) return null;
    ResultSetProxy last = lastResultSet;
    if (last != null && last.delegate() == rs) return last;
    last = new ResultSetProxy(rs, this);
    lastResultSet = last;
    return last;
  }

  @Override
  public ResultSet executeQuery(String sql) throws SQLException {
    return (ResultSet) run(QUERY, sql, UNSET, null, null);
  }

  @Override
  public int executeUpdate(String sql) throws SQLException {
    run(UPDATE, sql, UNSET, null, null);
    return (int) longResult;
  }

  @Override
  public int executeUpdate(String sql, int autoGeneratedKeys) throws SQLException {
    run(UPDATE, sql, autoGeneratedKeys, null, null);
    return (int) longResult;
  }

  @Override
  public int executeUpdate(String sql, int[] columnIndexes) throws SQLException {
    run(UPDATE, sql, UNSET, columnIndexes, null);
    return (int) longResult;
  }

  @Override
  public int executeUpdate(String sql, String[] columnNames) throws SQLException {
    run(UPDATE, sql, UNSET, null, columnNames);
    return (int) longResult;
  }

  @Override
  public long executeLargeUpdate(String sql) throws SQLException {
    run(LARGE_UPDATE, sql, UNSET, null, null);
    return longResult;
  }

  @Override
  public long executeLargeUpdate(String sql, int autoGeneratedKeys) throws SQLException {
    run(LARGE_UPDATE, sql, autoGeneratedKeys, null, null);
    return longResult;
  }

  @Override
  public long executeLargeUpdate(String sql, int[] columnIndexes) throws SQLException {
    run(LARGE_UPDATE, sql, UNSET, columnIndexes, null);
    return longResult;
  }

  @Override
  public long executeLargeUpdate(String sql, String[] columnNames) throws SQLException {
    run(LARGE_UPDATE, sql, UNSET, null, columnNames);
    return longResult;
  }

  @Override
  public boolean execute(String sql) throws SQLException {
    run(EXECUTE, sql, UNSET, null, null);
    return boolResult;
  }

  @Override
  public boolean execute(String sql, int autoGeneratedKeys) throws SQLException {
    run(EXECUTE, sql, autoGeneratedKeys, null, null);
    return boolResult;
  }

  @Override
  public boolean execute(String sql, int[] columnIndexes) throws SQLException {
    run(EXECUTE, sql, UNSET, columnIndexes, null);
    return boolResult;
  }

  @Override
  public boolean execute(String sql, String[] columnNames) throws SQLException {
    run(EXECUTE, sql, UNSET, null, columnNames);
    return boolResult;
  }

  @Override
  public void addBatch(String sql) throws SQLException {
    checkOpen();
    if (batch == null) batch = new ArrayList<>();
    batch.add(sql);
  }

  @Override
  public void clearBatch() throws SQLException {
    // pgjdbc empties the batch without a state check, also on a closed statement
    batchDone();
    if (!closed && physical != null) physical.clearBatch();
  }

  @Override
  public int[] executeBatch() throws SQLException {
    return (int[]) run(BATCH, null, UNSET, null, null);
  }

  @Override
  public long[] executeLargeBatch() throws SQLException {
    return (long[]) run(LARGE_BATCH, null, UNSET, null, null);
  }

  // ---------------------------------------------------------------- results

  @Override
  public ResultSet getResultSet() throws SQLException {
    checkOpen();
    Statement s = physical;
    if (s == null) return null;
    ResultSet rs = s.getResultSet();
    ResultSetProxy last = lastResultSet;
    // the same result, as pgjdbc returns it: a pool's statement proxy (HikariCP's) may wrap the
    // result executeQuery returned in a new object here
    if (rs != null && last != null && last.delegate() != rs && sameResult(last.delegate(), rs)) {
      return last;
    }
    return wrap(rs);
  }

  private static boolean sameResult(ResultSet a, ResultSet b) {
    try {
      return a.unwrap(ResultSet.class) == b.unwrap(ResultSet.class);
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }

  @Override
  public int getUpdateCount() throws SQLException {
    checkOpen();
    return physical == null ? -1 : physical.getUpdateCount();
  }

  @Override
  public long getLargeUpdateCount() throws SQLException {
    checkOpen();
    return physical == null ? -1 : physical.getLargeUpdateCount();
  }

  @Override
  public boolean getMoreResults() throws SQLException {
    checkOpen();
    return physical != null && physical.getMoreResults();
  }

  @Override
  public boolean getMoreResults(int current) throws SQLException {
    checkOpen();
    return physical != null && physical.getMoreResults(current);
  }

  @Override
  public ResultSet getGeneratedKeys() throws SQLException {
    checkOpen();
    // before any execute pgjdbc answers with an empty result set of its own: ask it for one
    Statement s = physical != null ? physical : physicalFor(conn.currentTarget());
    return wrap(s.getGeneratedKeys());
  }

  // ---------------------------------------------------------------- settings
  // pgjdbc reads and sets most of these without checking that the statement is open

  @Override
  public int getMaxFieldSize() throws SQLException {
    return settings.maxFieldSize == UNSET ? 0 : settings.maxFieldSize;
  }

  @Override
  public void setMaxFieldSize(int max) throws SQLException {
    checkOpen();
    if (max < 0) throw PgjdbcErrors.invalidParameter("The maximum field size must be a value"
        + " greater than or equal to 0.");
    if (physical != null) physical.setMaxFieldSize(max);
    settings = settings.writable();
    settings.maxFieldSize = max;
  }

  @Override
  public int getMaxRows() throws SQLException {
    checkOpen();
    return settings.maxRows == UNSET ? 0 : (int) Math.min(Integer.MAX_VALUE, settings.maxRows);
  }

  @Override
  public long getLargeMaxRows() throws SQLException {
    throw PgjdbcErrors.notImplemented("getLargeMaxRows");
  }

  @Override
  public void setLargeMaxRows(long max) throws SQLException {
    throw PgjdbcErrors.notImplemented("setLargeMaxRows");
  }

  @Override
  public void setMaxRows(int max) throws SQLException {
    checkOpen();
    if (max < 0) throw PgjdbcErrors.invalidParameter("Maximum number of rows must be a value"
        + " greater than or equal to 0.");
    if (physical != null) StatementSettings.setMaxRowsOn(physical, max);
    settings = settings.writable();
    settings.maxRows = max;
  }

  @Override
  public void setEscapeProcessing(boolean enable) throws SQLException {
    checkOpen();
    if (physical != null) physical.setEscapeProcessing(enable);
    settings = settings.writable();
    settings.escapeProcessing = enable;
  }

  @Override
  public int getQueryTimeout() throws SQLException {
    checkOpen();
    return settings.queryTimeout == UNSET ? 0 : settings.queryTimeout;
  }

  @Override
  public void setQueryTimeout(int seconds) throws SQLException {
    checkOpen();
    if (seconds < 0) throw PgjdbcErrors.invalidParameter("Query timeout must be a value greater"
        + " than or equals to 0.");
    if (physical != null) physical.setQueryTimeout(seconds);
    settings = settings.writable();
    settings.queryTimeout = seconds;
  }

  @Override
  public void cancel() throws SQLException {
    Statement s = physical;
    if (s != null) s.cancel();
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    checkOpen();
    return physical == null ? null : physical.getWarnings();
  }

  @Override
  public void clearWarnings() throws SQLException {
    // pgjdbc clears without a state check, also on a closed statement
    if (!closed && physical != null) physical.clearWarnings();
  }

  @Override
  public void setCursorName(String name) throws SQLException {
    checkOpen();
    if (physical != null) physical.setCursorName(name);
    settings = settings.writable();
    settings.cursorName = name;
  }

  @Override
  public void setFetchDirection(int direction) throws SQLException {
    // pgjdbc checks the constant at the call, not whether the statement is open
    if (direction != ResultSet.FETCH_FORWARD && direction != ResultSet.FETCH_REVERSE
        && direction != ResultSet.FETCH_UNKNOWN) {
      throw PgjdbcErrors.invalidParameter("Invalid fetch direction constant: " + direction + ".");
    }
    if (!closed && physical != null) physical.setFetchDirection(direction);
    settings = settings.writable();
    settings.fetchDirection = direction;
  }

  @Override
  public int getFetchDirection() throws SQLException {
    return settings.fetchDirection == UNSET ? ResultSet.FETCH_FORWARD : settings.fetchDirection;
  }

  @Override
  public void setFetchSize(int rows) throws SQLException {
    checkOpen();
    if (rows < 0) {
      throw PgjdbcErrors.invalidParameter("Fetch size must be a value greater to or equal to 0.");
    }
    if (physical != null) physical.setFetchSize(rows);
    settings = settings.writable();
    settings.fetchSize = rows;
  }

  @Override
  public int getFetchSize() throws SQLException {
    int f = settings.fetchSize;
    return f == UNSET ? conn.state.router.config.defaults.defaultRowFetchSize : f;
  }

  @Override
  public int getResultSetConcurrency() throws SQLException {
    return settings.concurrency;
  }

  @Override
  public int getResultSetType() throws SQLException {
    return settings.type;
  }

  @Override
  public int getResultSetHoldability() throws SQLException {
    int holdability = settings.holdability;
    return holdability == UNSET ? conn.state.holdability() : holdability;
  }

  @Override
  public void setPoolable(boolean poolable) throws SQLException {
    checkOpen();
    if (physical != null) physical.setPoolable(poolable);
    settings = settings.writable();
    settings.poolable = poolable;
  }

  @Override
  public boolean isPoolable() throws SQLException {
    checkOpen();
    return settings.poolable != null ? settings.poolable : this instanceof PreparedStatement;
  }

  @Override
  public void closeOnCompletion() throws SQLException {
    if (!closed && physical != null) physical.closeOnCompletion();
    settings = settings.writable();
    settings.closeOnCompletion = true;
  }

  @Override
  public boolean isCloseOnCompletion() throws SQLException {
    return settings.closeOnCompletion;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return conn;
  }

  @Override
  public boolean isClosed() throws SQLException {
    if (closed) return true;
    Statement s = physical;
    return settings.closeOnCompletion && s != null && s.isClosed();
  }

  /**
   * Closes the physical statement at once. Closed on the thread that uses the connection, it also
   * leaves the connection's statement list and gives back a read binding nothing needs any more;
   * closed on another thread (a cleaner, a pool's watchdog), as pgjdbc allows, it leaves both to
   * that thread, which drops closed statements from its list as it grows.
   */
  @Override
  public void close() throws SQLException {
    if (closed) return;
    closed = true;
    closePhysical();
    afterClose();
    if (conn.usedBy(Thread.currentThread())) {
      conn.unregister(this);
      conn.statementClosed();
    }
  }

  /** After an application's close(): what this statement can give back to its connection. */
  void afterClose() { }

  @Override
  public String enquoteLiteral(String val) throws SQLException {
    return Statement.super.enquoteLiteral(val);
  }

  @Override
  public String enquoteIdentifier(String identifier, boolean alwaysQuote) throws SQLException {
    return Statement.super.enquoteIdentifier(identifier, alwaysQuote);
  }

  @Override
  public boolean isSimpleIdentifier(String identifier) throws SQLException {
    return Statement.super.isSimpleIdentifier(identifier);
  }

  @Override
  public String enquoteNCharLiteral(String val) throws SQLException {
    return Statement.super.enquoteNCharLiteral(val);
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) return iface.cast(this);
    // pgjdbc's statement unwraps to what it is, open or closed; a closed one here has no
    // physical statement left to answer
    if (closed) throw new SQLException("Cannot unwrap to " + iface.getName());
    Connection target = conn.currentTarget();
    conn.state.rawUse(target); // SQL may run on pgjdbc's statement unseen
    return physicalFor(target).unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    if (iface.isInstance(this)) return true;
    Statement s = physical;
    // before the first execute: what unwrap would reach (it creates the physical statement)
    return s != null ? s.isWrapperFor(iface) : iface.isAssignableFrom(PgStatement.class);
  }

  // ---------------------------------------------------------------- PGStatement

  @Override
  public long getLastOID() throws SQLException {
    checkOpen();
    Statement s = physical;
    return s == null ? 0 : s.unwrap(PGStatement.class).getLastOID();
  }

  /** As pgjdbc: the prepare threshold 1 (server-prepare at once) or 0 (never). */
  @Override
  public void setUseServerPrepare(boolean flag) throws SQLException {
    setPrepareThreshold(flag ? 1 : 0);
  }

  /**
   * pgjdbc's answer: its physical statement's, else (nothing executed yet) what pgjdbc answers for
   * a statement whose query ran on its session 0 times ({@link #serverPreparesFirstExecute}).
   */
  @Override
  public boolean isUseServerPrepare() {
    Statement s = physical;
    if (s == null) return serverPreparesFirstExecute();
    try {
      return s.unwrap(PGStatement.class).isUseServerPrepare();
    } catch (SQLException e) {
      return false;
    }
  }

  /** A plain statement never server-prepares (pgjdbc's {@code PgStatement}). */
  boolean serverPreparesFirstExecute() {
    return false;
  }

  @Override
  public void setPrepareThreshold(int threshold) throws SQLException {
    checkOpen();
    if (physical != null) physical.unwrap(PGStatement.class).setPrepareThreshold(threshold);
    settings = settings.writable();
    settings.prepareThreshold = threshold;
  }

  /** The threshold set on this statement, else the connection's ({@code prepareThreshold}). */
  @Override
  public int getPrepareThreshold() {
    int t = settings.prepareThreshold;
    if (t == StatementSettings.UNSET_THRESHOLD) {
      t = conn.state.router.config.defaults.prepareThreshold;
    }
    return t < 0 ? 1 : t; // pgjdbc: a negative threshold forces binary transfer, and means 1
  }

  @Override
  public void setAdaptiveFetch(boolean adaptiveFetch) {
    Statement s = physical;
    if (s != null) {
      try {
        s.unwrap(PGStatement.class).setAdaptiveFetch(adaptiveFetch);
      } catch (SQLException e) {
        throw new IllegalStateException(e.getMessage(), e); // pgjdbc's own never fails
      }
    }
    settings = settings.writable();
    settings.adaptiveFetch = adaptiveFetch;
  }

  @Override
  public boolean getAdaptiveFetch() {
    Boolean a = settings.adaptiveFetch;
    return a != null ? a : conn.state.router.config.defaults.adaptiveFetch;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + (closed ? "[closed]" : "[open]");
  }
}
