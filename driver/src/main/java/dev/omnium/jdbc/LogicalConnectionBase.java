package dev.omnium.jdbc;

import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.ShardingKey;
import java.sql.Statement;
import java.sql.Struct;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executor;
import org.postgresql.core.BaseConnection;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * The part of a logical connection that needs no routing decision: statement factories, the JDBC
 * session state (recorded in {@link SessionState}, then applied to whatever sessions are bound),
 * warnings, metadata and factories. {@link OmniumConnection} adds binding, routing, transactions
 * and lifecycle; {@link PgConnectionApi} is pgjdbc's own connection API.
 */
abstract class LogicalConnectionBase extends PgConnectionApi {
  static final int UNSET = SessionState.UNSET;
  private static final String APPLICATION_NAME = "ApplicationName";
  private static final int FORWARD = ResultSet.TYPE_FORWARD_ONLY;
  private static final int READ_ONLY = ResultSet.CONCUR_READ_ONLY;

  /**
   * Everything this connection keeps but its own few fields. Once it closed and gave the state
   * back to its data source, its data source's closed state (bound to nothing, never set).
   */
  SessionState state;
  /**
   * What few handles need, made at the first of it: a handle of {@code OmniumDataSource} is made
   * for each unit of work, so its own fields stay few (24 bytes with the state and its flag).
   */
  private Extras extras;

  /** A handle's rarely set values. */
  static final class Extras {
    /** What {@link #setMaxAge} was given on this handle, or null (the state's value holds). */
    Duration maxAge;
    /** The URL this handle was opened with, passwords masked ({@code getMetaData().getURL()}). */
    String url;
    /**
     * Made at the first {@link #getMetaData()} and kept, as pgjdbc keeps its own: it resolves
     * its session at each call, so one object serves the connection's life (an OpenTelemetry
     * agent asks for it once per connection object, to describe the database).
     */
    DatabaseMetaData metaData;
  }

  private Extras extras() {
    Extras e = extras;
    if (e == null) extras = e = new Extras();
    return e;
  }

  /** The URL this handle was opened with (passwords masked), or null: its data source's. */
  final String url() {
    Extras e = extras;
    return e == null ? null : e.url;
  }

  final void url(String masked) {
    extras().url = masked;
  }

  abstract OmniumConnection self();

  abstract void checkOpen() throws SQLException;

  abstract Binding primaryBinding();

  abstract Binding readBinding();

  abstract boolean readInTransaction();

  abstract boolean primaryInTransaction() throws SQLException;

  abstract void leaveRead(boolean dead);

  abstract SQLException checkPrimary(SQLException e);

  abstract Connection currentOrPrimary() throws SQLException;

  abstract Connection primaryConnection();

  abstract Connection readConnection();

  abstract String database();

  abstract String applicationName();

  /** Whether this handle was closed (its state may serve another handle since). */
  abstract boolean closedHandle();

  /** The session of the current unit of work, bound if need be (describe-only calls). */
  abstract Connection currentTarget() throws SQLException;

  /** After a failed call on {@code physical}: a session that ended is evicted, never rebound. */
  abstract void statementFailed(Connection physical, SQLException e);

  /**
   * Changes the staleness this connection's read-only work accepts, from its next unit of work.
   *
   * @param maxAge largest accepted replica lag; must be positive
   * @throws SQLException SQLState HY000 when {@code maxAge} is null, zero or negative
   */
  public void setMaxAge(Duration maxAge) throws SQLException {
    if (maxAge == null || maxAge.isNegative() || maxAge.isZero()) {
      throw new SQLException("omnium: maxAge must be a positive duration, got " + maxAge, "HY000");
    }
    long nanos = maxAge.toNanos();
    extras().maxAge = maxAge; // a closed handle still answers it, as a closed connection did
    SessionState s = state;
    if (!s.ofClosedHandles) s.maxAgeNanos = nanos;
  }

  /**
   * The staleness this connection's read-only work accepts.
   *
   * @return the {@code maxAge} in force for the next unit of work
   */
  public Duration getMaxAge() {
    Extras e = extras;
    Duration d = e == null ? null : e.maxAge;
    return d != null ? d : Duration.ofNanos(state.maxAgeNanos);
  }

  /**
   * The fetch size of statements that set none, as pgjdbc's {@code defaultRowFetchSize}.
   *
   * @param fetchSize rows per round trip, 0 for all at once
   * @throws SQLException 22023 when negative
   */
  @Override
  public void setDefaultFetchSize(int fetchSize) throws SQLException {
    if (fetchSize < 0) {
      throw PgjdbcErrors.invalidParameter("Fetch size must be a value greater than or equal to 0.");
    }
    state.defaultFetchSize = fetchSize;
  }

  @Override
  public int getDefaultFetchSize() {
    return state.defaultFetchSize;
  }

  /** As pgjdbc: read-only, unless {@code readOnlyMode=ignore}. */
  @Override
  public boolean hintReadOnly() {
    return state.readOnly && state.readOnlyMode != ConnectionDefaults.ReadOnlyMode.IGNORE;
  }

  /**
   * The last write this connection committed on the primary, as an opaque token for
   * {@link #requireWriteToken(String)} or {@link OmniumDataSource#read(Duration, String)}.
   *
   * @return the token, or null before the first write or when {@code readYourWrites=off}
   */
  public String lastWriteToken() {
    return state.writes.lastToken();
  }

  /**
   * Makes this connection's read-only work see the write the token names: it goes to a replica
   * only if that replica has replayed it, else to the fallback route. Also available as the
   * client-info property {@value OmniumConnection#WRITE_TOKEN_CLIENT_INFO}.
   *
   * @param token from {@link #lastWriteToken()}, possibly of another process; null forgets it
   * @throws SQLException SQLState 22023 when the token is malformed
   */
  public void requireWriteToken(String token) throws SQLException {
    if (closedHandle()) { // checked, then forgotten: no read follows, the state may serve another
      if (token != null) WritePositions.parseToken(token);
      return;
    }
    state.writes.require(token);
  }

  String writeTokenRequired() {
    return state.writes.requiredToken();
  }

  @Override
  public String nativeSQL(String sql) throws SQLException {
    return currentOrPrimary().nativeSQL(sql);
  }

  /**
   * A new statement joins the list, on the thread that uses the connection now. Statements closed
   * on other threads leave it here, as it doubles (see {@link LogicalStatement#close()}).
   */
  void register(LogicalStatement s) {
    SessionState st = state;
    st.owner = Thread.currentThread();
    ArrayList<LogicalStatement> statements = st.statements;
    int n = statements.size();
    if (n >= 16 && (n & (n - 1)) == 0) statements.removeIf(open -> open.closed);
    statements.add(s);
  }

  /**
   * The bound sessions' {@code standard_conforming_strings} (pgjdbc keeps what the server
   * reported), or null when none is bound.
   */
  final Boolean standardConformingStrings() {
    Connection c = primaryConnection();
    if (c == null) c = readConnection();
    try {
      return c == null ? null : c.unwrap(BaseConnection.class).getStandardConformingStrings();
    } catch (SQLException e) {
      return null;
    }
  }

  /** Whether {@code t} is the thread that uses this connection: it made or ran a statement last. */
  final boolean usedBy(Thread t) {
    return state.owner == t;
  }

  void unregister(LogicalStatement s) {
    ArrayList<LogicalStatement> statements = state.statements;
    for (int i = statements.size() - 1; i >= 0; i--) {
      if (statements.get(i) == s) {
        statements.remove(i);
        return;
      }
    }
  }

  // ---------------------------------------------------------------- statements

  // pgjdbc checks the result set arguments at the factory, a holdability only when one is given
  // (UNSET stands for "the connection's": it is never an argument's value here)

  @Override
  public Statement createStatement() throws SQLException {
    return statement(FORWARD, READ_ONLY, false, UNSET);
  }

  @Override
  public Statement createStatement(int type, int concurrency) throws SQLException {
    return statement(type, concurrency, false, UNSET);
  }

  @Override
  public Statement createStatement(int type, int concurrency, int holdability)
      throws SQLException {
    return statement(type, concurrency, true, holdability);
  }

  private Statement statement(int type, int concurrency, boolean given, int holdability)
      throws SQLException {
    checkOpen();
    StatementSettings.check(type, concurrency, given, holdability);
    LogicalStatement s = new LogicalStatement(self(), type, concurrency, holdability);
    register(s);
    return s;
  }

  @Override
  public PreparedStatement prepareStatement(String sql) throws SQLException {
    return prepare(sql, FORWARD, READ_ONLY, false, UNSET, UNSET, null, null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int type, int concurrency)
      throws SQLException {
    return prepare(sql, type, concurrency, false, UNSET, UNSET, null, null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int type, int concurrency,
                                            int holdability) throws SQLException {
    return prepare(sql, type, concurrency, true, holdability, UNSET, null, null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int keys) throws SQLException {
    return prepare(sql, FORWARD, READ_ONLY, false, UNSET, keys, null, null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int[] columns) throws SQLException {
    return prepare(sql, FORWARD, READ_ONLY, false, UNSET, UNSET, columns.clone(), null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, String[] columns) throws SQLException {
    return prepare(sql, FORWARD, READ_ONLY, false, UNSET, UNSET, null, columns.clone());
  }

  private PreparedStatement prepare(String sql, int type, int concurrency, boolean given,
      int holdability, int keys, int[] columnIndexes, String[] columnNames) throws SQLException {
    checkOpen();
    if (sql == null) throw new SQLException("omnium: SQL must not be null", "HY000");
    StatementSettings.check(type, concurrency, given, holdability);
    LogicalPreparedStatement s = new PreparedStatementProxy(self(), sql, type, concurrency,
        holdability, keys, columnIndexes, columnNames);
    register(s);
    return s;
  }

  @Override
  public CallableStatement prepareCall(String sql) throws SQLException {
    return call(sql, FORWARD, READ_ONLY, false, UNSET);
  }

  @Override
  public CallableStatement prepareCall(String sql, int type, int concurrency)
      throws SQLException {
    return call(sql, type, concurrency, false, UNSET);
  }

  @Override
  public CallableStatement prepareCall(String sql, int type, int concurrency, int holdability)
      throws SQLException {
    return call(sql, type, concurrency, true, holdability);
  }

  /** As pgjdbc, a malformed call escape fails here, when the statement is prepared. */
  private CallableStatement call(String sql, int type, int concurrency, boolean given,
      int holdability) throws SQLException {
    checkOpen();
    if (sql == null) throw new SQLException("omnium: SQL must not be null", "HY000");
    StatementSettings.check(type, concurrency, given, holdability);
    ParameterCounts.checkCall(sql);
    LogicalCallableStatement s = new CallableStatementProxy(self(), sql, type, concurrency,
        holdability);
    register(s);
    return s;
  }

  @Override
  public void setTransactionIsolation(int level) throws SQLException {
    checkOpen();
    if (readInTransaction() || primaryInTransaction()) {
      throw PgjdbcErrors.activeTransaction("Cannot change transaction isolation level in the"
          + " middle of a transaction.");
    }
    if (level != TRANSACTION_READ_UNCOMMITTED && level != TRANSACTION_READ_COMMITTED
        && level != TRANSACTION_REPEATABLE_READ && level != TRANSACTION_SERIALIZABLE) {
      // pgjdbc refuses at the call; recorded, the level would fail every later statement
      throw new PSQLException("Transaction isolation level " + level + " not supported.",
          PSQLState.NOT_IMPLEMENTED);
    }
    state.isolation = level;
    changed(SessionState.ISOLATION);
  }

  /**
   * As pgjdbc, the server's answer (SQL such as {@code SET TRANSACTION ISOLATION LEVEL} counts):
   * the bound session of the current unit of work, else the level the next one gets.
   */
  @Override
  public int getTransactionIsolation() throws SQLException {
    checkOpen();
    BaseConnection c = pgBound();
    if (c != null) return c.getTransactionIsolation();
    return state.isolation != UNSET ? state.isolation : TRANSACTION_READ_COMMITTED;
  }

  /**
   * After a JDBC setter recorded its value: applies it to the bound sessions. The primary's
   * failure fails the setter; a read session that cannot take it is given back (the next unit
   * of work binds afresh with the whole state) unless a transaction runs on it.
   */
  final void changed(int bit) throws SQLException {
    state.set |= bit;
    // the last writer owns a setting: a SQL SET of the same one is no longer replayed
    if (bit == SessionState.SCHEMA) state.sqlSettings.supersede("search_path");
    if (bit == SessionState.ISOLATION) state.sqlSettings.supersede("default_transaction_isolation");
    Binding p = primaryBinding();
    Connection pc = p == null ? null : p.connection();
    if (pc != null) {
      try {
        p.wake(state.autoCommit); // pgjdbc's setSchema runs a statement: in its transaction
        state.apply(p, pc, bit);
      } catch (SQLException e) {
        throw checkPrimary(e);
      }
    }
    Binding r = readBinding();
    Connection rc = r == null ? null : r.connection();
    if (rc != null) {
      try {
        state.apply(r, rc, bit);
      } catch (SQLException e) {
        if (readInTransaction()) throw e;
        leaveRead(SqlStates.connectionDead(e));
      }
    }
  }

  @Override
  public void setSchema(String schema) throws SQLException {
    checkOpen();
    state.schema = schema;
    changed(SessionState.SCHEMA);
  }

  @Override
  public String getSchema() throws SQLException {
    checkOpen();
    // pgjdbc asks the server (current_schema(): null when the schema set does not exist), so
    // the answer comes from a session: the bound one, else the one the connection would bind
    return currentOrPrimary().getSchema();
  }

  @Override
  public void setCatalog(String catalog) throws SQLException {
    checkOpen();
    // PostgreSQL has no catalogs to switch: pgjdbc ignores it, and so does this
  }

  @Override
  public String getCatalog() throws SQLException {
    checkOpen();
    return database();
  }

  /**
   * Sets the socket timeout of the bound sessions. A value of 0, or one above a route's own
   * bound (e.g. the replica route's), keeps the route's bound.
   *
   * @param executor as for pgjdbc
   * @param milliseconds 0 for none
   * @throws SQLException 22023 for a negative value, 08003 when closed
   */
  @Override
  public void setNetworkTimeout(Executor executor, int milliseconds) throws SQLException {
    if (milliseconds < 0) {
      throw PgjdbcErrors.invalidParameter(
          "Network timeout must be a value greater than or equal to 0.");
    }
    checkOpen();
    state.networkTimeout = milliseconds;
    state.networkTimeoutExecutor = executor;
    changed(SessionState.NETWORK_TIMEOUT);
  }

  @Override
  public int getNetworkTimeout() throws SQLException {
    checkOpen();
    return state.networkTimeout();
  }

  @Override
  public void setHoldability(int holdability) throws SQLException {
    checkOpen();
    if (holdability != ResultSet.HOLD_CURSORS_OVER_COMMIT
        && holdability != ResultSet.CLOSE_CURSORS_AT_COMMIT) {
      throw PgjdbcErrors.invalidParameter(
          "Unknown ResultSet holdability setting: " + holdability + ".");
    }
    state.holdability = holdability;
    changed(SessionState.HOLDABILITY);
  }

  @Override
  public int getHoldability() throws SQLException {
    checkOpen();
    return state.holdability();
  }

  @Override
  public void setClientInfo(String name, String value) throws SQLClientInfoException {
    SQLClientInfoException closed = closedForClientInfo(List.of(name));
    if (closed != null) throw closed;
    try {
      if (OmniumConnection.WRITE_TOKEN_CLIENT_INFO.equals(name)) {
        checkOpen();
        requireWriteToken(value);
        return;
      }
      checkOpen();
      state.putClientInfo(name, value);
      clientInfoChanged(name, value);
    } catch (SQLClientInfoException e) {
      throw e;
    } catch (SQLException e) {
      throw new SQLClientInfoException(e.getMessage(), e.getSQLState(), null, e);
    }
  }

  @Override
  public void setClientInfo(Properties properties) throws SQLClientInfoException {
    SQLClientInfoException closed = closedForClientInfo(properties.stringPropertyNames());
    if (closed != null) throw closed;
    try {
      checkOpen();
      Properties p = new Properties();
      p.putAll(properties);
      p.putIfAbsent(APPLICATION_NAME, ""); // pgjdbc clears the name the properties leave out
      state.putClientInfo(p);
      changed(SessionState.CLIENT_INFO);
    } catch (SQLClientInfoException e) {
      throw e;
    } catch (SQLException e) {
      throw new SQLClientInfoException(e.getMessage(), e.getSQLState(), null, e);
    }
  }

  /** pgjdbc's answer to setClientInfo on a closed connection, or null when open. */
  private SQLClientInfoException closedForClientInfo(Iterable<String> names) {
    try {
      checkOpen();
      return null;
    } catch (SQLException e) {
      return PgjdbcErrors.clientInfoOnClosed(names, e);
    }
  }

  /** One client-info value goes to the bound sessions as it is, as pgjdbc would send it. */
  final void clientInfoChanged(String name, String value) throws SQLException {
    state.set |= SessionState.CLIENT_INFO;
    Binding p = primaryBinding();
    Connection pc = p == null ? null : p.connection();
    if (pc != null) {
      p.wake(state.autoCommit);
      pc.setClientInfo(name, value);
      p.applied |= SessionState.CLIENT_INFO;
    }
    Binding r = readBinding();
    Connection rc = r == null ? null : r.connection();
    if (rc != null) {
      rc.setClientInfo(name, value);
      r.applied |= SessionState.CLIENT_INFO;
    }
  }

  @Override
  public String getClientInfo(String name) throws SQLException {
    checkOpen();
    if (OmniumConnection.WRITE_TOKEN_CLIENT_INFO.equals(name)) {
      return writeTokenRequired();
    }
    String v = state.clientInfo == null ? null : state.clientInfo.getProperty(name);
    if (!APPLICATION_NAME.equals(name)) return v;
    // pgjdbc answers what the server reported last (SET application_name included): the primary
    // session's, when bound (read sessions carry their route in theirs), else the logical name
    Connection p = primaryConnection();
    if (p != null) return p.getClientInfo(name);
    return v == null ? applicationName() : v;
  }

  @Override
  public Properties getClientInfo() throws SQLException {
    checkOpen();
    Properties p = state.clientInfoCopy();
    String name = getClientInfo(APPLICATION_NAME); // as pgjdbc: the server's, SQL SET included
    if (name != null) p.setProperty(APPLICATION_NAME, name);
    return p;
  }

  @Override
  public Map<String, Class<?>> getTypeMap() throws SQLException {
    checkOpen();
    return state.typeMap();
  }

  @Override
  public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
    checkOpen();
    state.typeMap = map;
    changed(SessionState.TYPE_MAP);
  }

  /** The warnings of the bound sessions, copied into one fresh chain (never a cycle). */
  @Override
  public SQLWarning getWarnings() throws SQLException {
    checkOpen();
    Connection p = primaryConnection();
    Connection r = readConnection();
    return Warnings.chain(p == null ? null : p.getWarnings(), r == null ? null : r.getWarnings());
  }

  /**
   * Clears the bound sessions' warnings. A kept primary session that holds no transaction then
   * becomes {@link Binding#quiet}: an application pool calls this at every return, and until the
   * session is used again there is nothing on it to clear.
   */
  @Override
  public void clearWarnings() throws SQLException {
    checkOpen();
    Binding pb = primaryBinding();
    Connection p = pb == null ? null : pb.connection();
    Connection r = readConnection();
    if (p != null && !pb.quiet) {
      p.clearWarnings();
      pb.quiet = state.mayQuiet(pb);
    }
    if (r != null) r.clearWarnings();
  }

  /** Metadata that resolves its session at each call; its URL is the masked omnium one. */
  @Override
  public DatabaseMetaData getMetaData() throws SQLException {
    checkOpen();
    Extras e = extras();
    DatabaseMetaData m = e.metaData;
    if (m == null) e.metaData = m = new MetaDataProxy(MetaDataTarget.of(self()), self());
    return m;
  }

  // ---------------------------------------------------------------- factories

  @Override public Clob createClob() throws SQLException { return currentOrPrimary().createClob(); }
  @Override public Blob createBlob() throws SQLException { return currentOrPrimary().createBlob(); }

  @Override
  public NClob createNClob() throws SQLException {
    return currentOrPrimary().createNClob();
  }

  @Override
  public SQLXML createSQLXML() throws SQLException {
    return currentOrPrimary().createSQLXML();
  }

  /** An array valid on any session: its server work runs on this connection's current one. */
  @Override
  public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
    return new LogicalArray(self(), typeName, elements);
  }

  @Override
  public Struct createStruct(String typeName, Object[] attributes) throws SQLException {
    return currentOrPrimary().createStruct(typeName, attributes);
  }

  // Savepoint calls fail like statements: a session lost there closes this connection (primary)
  // or ends the read-only transaction, as pgjdbc's connection would be closed.

  @Override
  public void rollback(Savepoint savepoint) throws SQLException {
    state.sqlSettings.rewound(); // which SQL settings of the transaction still hold is unknown
    onSavepointSession(c -> {
      c.rollback(savepoint);
      return null;
    });
  }

  @Override
  public Savepoint setSavepoint() throws SQLException {
    return onSavepointSession(Connection::setSavepoint);
  }

  @Override
  public Savepoint setSavepoint(String name) throws SQLException {
    return onSavepointSession(c -> c.setSavepoint(name));
  }

  @Override
  public void releaseSavepoint(Savepoint savepoint) throws SQLException {
    onSavepointSession(c -> {
      c.releaseSavepoint(savepoint);
      return null;
    });
  }

  /** A savepoint call on the session of the current unit of work. */
  private interface SavepointCall<T> {
    T on(Connection c) throws SQLException;
  }

  private <T> T onSavepointSession(SavepointCall<T> call) throws SQLException {
    Connection c = currentTarget();
    try {
      return call.on(c);
    } catch (SQLException e) {
      statementFailed(c, e);
      throw SqlStates.asConnectionLost(e);
    }
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey key, ShardingKey superKey, int timeout)
      throws SQLException {
    throw new SQLFeatureNotSupportedException("omnium: sharding keys are not supported");
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey key, int timeout) throws SQLException {
    throw new SQLFeatureNotSupportedException("omnium: sharding keys are not supported");
  }

  @Override
  public void setShardingKey(ShardingKey key, ShardingKey superKey) throws SQLException {
    throw new SQLFeatureNotSupportedException("omnium: sharding keys are not supported");
  }

  @Override
  public void setShardingKey(ShardingKey key) throws SQLException {
    throw new SQLFeatureNotSupportedException("omnium: sharding keys are not supported");
  }

  // ---------------------------------------------------------------- recycled parameter log

  /** A parameter log for a new prepared statement: this connection's spare one, or a new one. */
  final ParameterLog takeParameterLog() {
    return state.takeParameterLog();
  }

  /** A closed statement's log: emptied and kept for the next statement when small enough. */
  final void recycle(ParameterLog log) {
    state.recycle(log);
  }
}
