package dev.omnium.jdbc;

import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.ShardingKey;
import java.sql.Statement;
import java.sql.Struct;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executor;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import org.postgresql.jdbc.PgConnection;

/**
 * The connection an application holds. Read-write work runs on one primary connection, bound at
 * first use and kept until close, so session state behaves as with plain pgjdbc. Read-only work
 * ({@link #setReadOnly(boolean) setReadOnly(true)}) is routed when each transaction starts (each
 * statement in autocommit mode) to the least-loaded replica whose effective lag is within
 * {@code maxAge}, else to the capped fallback pool on the primary, and released at commit/rollback.
 *
 * <p>Connection state set through JDBC (auto-commit, isolation, schema, network timeout, holdability,
 * client info, type map) belongs to this logical connection and is applied to whichever physical
 * connection is bound. State set with SQL ({@code SET search_path …}) stays on the physical
 * connection it ran on: for a read-only route that is a pooled connection, so use the JDBC setters.
 *
 * <p>Not thread-safe, like pgjdbc's connection: use it from one thread at a time.
 */
public final class OmniumConnection implements Connection {
  private static final int UNSET = -1;

  private final Router router;
  private final PrimarySource primarySource;
  private long maxAgeNanos;
  private final boolean fallbackOnly;

  /** The bound primary connection, or null until read-write work needs one. */
  private Connection primary;
  /** The bound read connection (replica or fallback), or null. */
  private Connection read;
  private Route readRoute;
  private ReplicaEndpoint readEndpoint;
  /** Statements run in the current read-only unit of work: only the first may be retried. */
  private int readStatements;
  private boolean readRetried;
  /** Set when a read-only transaction's connection died mid-way: its statements fail until rollback. */
  private SQLException readTxLost;

  private boolean readOnly;
  private boolean autoCommit = true;
  private int isolation = UNSET;
  private String schema;
  private String catalog;
  private int networkTimeout = UNSET;
  private Executor networkTimeoutExecutor;
  private int holdability = UNSET;
  private Properties clientInfo;
  private Map<String, Class<?>> typeMap;

  /** Read-your-writes: the last WAL position this connection committed, and the one its reads must see. */
  private long lastWriteLsn;
  private long requiredLsn;

  private final ArrayList<LogicalStatement> statements = new ArrayList<>();
  private boolean closed;

  OmniumConnection(Router router, PrimarySource primarySource, long maxAgeNanos, boolean fallbackOnly) {
    this.router = router;
    this.primarySource = primarySource;
    this.maxAgeNanos = maxAgeNanos;
    this.fallbackOnly = fallbackOnly;
  }

  // ---------------------------------------------------------------- routing

  /** The physical connection the next statement runs on, routing a read-only unit of work when it starts. */
  Connection beginStatement() throws SQLException {
    checkOpen();
    if (!readOnly) {
      router.primaryStatements.increment();
      return bindPrimary();
    }
    if (readTxLost != null) {
      throw new SQLException("omnium: the connection of this read-only transaction was lost; roll back and retry",
          "08003", readTxLost);
    }
    Connection c = routeRead();
    readStatements++;
    return c;
  }

  /** Like {@link #beginStatement()} but for describe-only calls (metadata), which do not count as a statement. */
  Connection currentTarget() throws SQLException {
    checkOpen();
    return readOnly ? routeRead() : bindPrimary();
  }

  private Connection routeRead() throws SQLException {
    long now = System.nanoTime();
    long mustSee = requiredPosition(now);
    // PostgreSQL refuses serializable transactions on a standby: those reads use the fallback route.
    boolean primaryOnly = fallbackOnly || isolation == TRANSACTION_SERIALIZABLE;
    Connection bound = read;
    if (bound != null) {
      if (!autoCommit) return bound; // the transaction keeps its route until commit/rollback
      // Autocommit: each statement is routed, but keep a binding that is still the right choice.
      boolean keep = readRoute == Route.REPLICA
          ? !primaryOnly && readEndpoint.watcher.isFresh(now, maxAgeNanos)
              && (mustSee == 0 || Long.compareUnsigned(readEndpoint.watcher.replayLsn(), mustSee) >= 0)
          : primaryOnly || router.pickReplica(now, maxAgeNanos, mustSee) == null;
      if (keep) {
        readStatements = 0;
        readRetried = false;
        countRoute(readRoute);
        return bound;
      }
      releaseRead(false);
    }
    if (!primaryOnly) {
      ReplicaEndpoint r = router.pickReplica(now, maxAgeNanos, mustSee);
      boolean checkPosition = false;
      if (r == null && mustSee != 0) {
        // No replica's sample shows the position yet: one check on a fresh replica decides.
        r = router.pickReplica(now, maxAgeNanos, 0);
        checkPosition = true;
      }
      if (r != null) {
        Connection c;
        try {
          c = r.borrow();
        } catch (SQLException e) {
          // The replica could not lend a connection within replicaAcquireTimeout: the fallback serves.
          router.replicaAcquireFailures.increment();
          c = null;
        }
        if (c != null && checkPosition && !hasReplayed(r, c, mustSee)) c = null;
        if (c != null) {
          bindRead(c, Route.REPLICA, r);
          return c;
        }
      }
    }
    bindRead(router.borrowFallback(), Route.FALLBACK, null);
    return read;
  }

  /** Read-your-writes: the WAL position this unit of work must see, 0 when none (no cost then). */
  private long requiredPosition(long nowNanos) {
    long thread = router.writePositions.requiredForThisThread(nowNanos);
    long own = requiredLsn;
    return Long.compareUnsigned(thread, own) >= 0 ? thread : own;
  }

  /** Asks the replica connection itself; gives it back when it has not replayed the position. */
  private boolean hasReplayed(ReplicaEndpoint r, Connection c, long lsn) {
    router.writePositionChecks.increment();
    boolean ok = false;
    boolean dead = false;
    try (Statement st = c.createStatement();
         java.sql.ResultSet rs = st.executeQuery("SELECT pg_last_wal_replay_lsn()::text")) {
      String replayed = rs.next() ? rs.getString(1) : null;
      ok = replayed != null && Long.compareUnsigned(Lsn.parse(replayed), lsn) >= 0;
    } catch (SQLException e) {
      dead = SqlStates.connectionDead(e);
    } catch (RuntimeException e) {
      ok = false;
    }
    if (!ok) r.release(c, dead);
    return ok;
  }

  /**
   * Read-your-writes: after a write commits on the primary, remember where the primary's WAL ends
   * (one extra round trip, only when the feature is on). The insert position is used rather than
   * the write position because with synchronous_commit=off the commit record may still be in WAL
   * buffers: the insert position is never before it.
   */
  void afterPrimaryCommit() {
    if (!router.writePositions.enabled() || primary == null) return;
    Connection p = primary;
    long lsn;
    try {
      boolean restore = !p.getAutoCommit();
      if (restore) p.setAutoCommit(true); // no transaction is open: pgjdbc sends nothing for this
      try (Statement st = p.createStatement();
           java.sql.ResultSet rs = st.executeQuery("SELECT pg_current_wal_insert_lsn()::text")) {
        lsn = rs.next() ? Lsn.parse(rs.getString(1)) : UNKNOWN_WRITE_POSITION;
      } finally {
        if (restore) p.setAutoCommit(false);
      }
    } catch (SQLException | RuntimeException e) {
      // The write itself committed: never fail it. Not knowing where it ended, the reads that must
      // see it take the primary's fallback route until the TTL ends (the safe direction).
      lsn = UNKNOWN_WRITE_POSITION;
    }
    if (Long.compareUnsigned(lsn, lastWriteLsn) > 0) lastWriteLsn = lsn;
    router.writePositions.remember(lsn);
  }

  /** Compares above every real WAL position: no replica qualifies for a read that must see it. */
  private static final long UNKNOWN_WRITE_POSITION = -1L;

  /** An autocommit statement that changed data on the primary committed. */
  void afterAutocommitWrite() {
    if (autoCommit && !readOnly && router.writePositions.enabled()) afterPrimaryCommit();
  }

  /**
   * The last write this connection committed on the primary, as an opaque token for
   * {@link #requireWriteToken(String)} or {@link OmniumDataSource#read(Duration, String)} elsewhere;
   * null before the first write or when {@code readYourWrites=off}.
   */
  public String lastWriteToken() {
    return lastWriteLsn == 0 ? null : WritePositions.token(lastWriteLsn);
  }

  /**
   * Makes this connection's read-only work see the write the token names: it goes to a replica only
   * if that replica has replayed it, else to the fallback route. {@code null} forgets it. The same
   * is available as the client-info property {@code OmniumWriteToken}.
   */
  public void requireWriteToken(String token) throws SQLException {
    requiredLsn = token == null ? 0 : WritePositions.parseToken(token);
  }

  private void bindRead(Connection c, Route route, ReplicaEndpoint endpoint) throws SQLException {
    read = c;
    readRoute = route;
    readEndpoint = endpoint;
    readStatements = 0;
    readRetried = false;
    try {
      applyState(c);
    } catch (SQLException e) {
      releaseRead(SqlStates.connectionDead(e));
      throw e;
    }
    countRoute(route);
  }

  private void countRoute(Route route) {
    if (route == Route.REPLICA) {
      router.replicaRoutes.increment();
    } else {
      router.fallbackRoutes.increment();
    }
  }

  /**
   * Called by a statement whose execution failed. Returns the fallback connection to retry on when
   * the error is a replica recovery conflict (or a lost replica connection) at the first statement
   * of a read-only unit of work, so nothing from it reached the caller; otherwise null. A fallback
   * session lost there (the primary crashed or was switched over) is retried the same way: the
   * read waits for the fallback route once more, at most poolTimeout, and reaches the new primary.
   */
  Connection retryTarget(SQLException e) throws SQLException {
    boolean lostFallback = readRoute == Route.FALLBACK && SqlStates.connectionDead(e);
    if ((readRoute != Route.REPLICA && !lostFallback) || read == null || readStatements != 1
        || readRetried || !SqlStates.retryableOnReplica(e)) {
      return null;
    }
    boolean dead = SqlStates.connectionDead(e) || isClosedQuietly(read);
    releaseRead(dead);
    Connection c = router.borrowFallback();
    bindRead(c, Route.FALLBACK, null);
    readStatements = 1;
    readRetried = true;
    router.retries.increment();
    return c;
  }

  /** After any statement error on a read binding: a connection whose session ended is evicted now. */
  void statementFailed(Connection physical, SQLException e) {
    if (physical == read && read != null && SqlStates.connectionDead(e)) {
      if (!autoCommit) readTxLost = e; // the transaction is gone: do not silently start another
      releaseRead(true);
    } else if (physical == primary && primary != null && SqlStates.connectionDead(e)) {
      Connection p = primary;
      primary = null;
      primarySource.release(p, true);
      detachStatements(p);
    }
  }

  private static boolean isClosedQuietly(Connection c) {
    try {
      return c.isClosed();
    } catch (SQLException e) {
      return true;
    }
  }

  private Connection bindPrimary() throws SQLException {
    Connection p = primary;
    if (p == null) {
      try {
        p = primarySource.open();
      } catch (SQLException e) {
        throw SqlStates.asConnectionLost(e); // e.g. 57P03 while the primary restarts: class 08 to callers
      }
      try {
        applyState(p);
      } catch (SQLException e) {
        primarySource.release(p, SqlStates.connectionDead(e));
        throw e;
      }
      primary = p;
    }
    return p;
  }

  private void applyState(Connection c) throws SQLException {
    if (!autoCommit) c.setAutoCommit(false);
    if (isolation != UNSET && isolation != TRANSACTION_READ_COMMITTED) c.setTransactionIsolation(isolation);
    if (schema != null) c.setSchema(schema);
    if (networkTimeout != UNSET) c.setNetworkTimeout(networkTimeoutExecutor, networkTimeout);
    if (holdability != UNSET) c.setHoldability(holdability);
    if (clientInfo != null) c.setClientInfo(clientInfo);
    if (typeMap != null) c.setTypeMap(typeMap);
  }

  private void releaseRead(boolean dead) {
    Connection c = read;
    if (c == null) return;
    read = null;
    detachStatements(c);
    if (readRoute == Route.REPLICA) {
      readEndpoint.release(c, dead);
    } else {
      router.releaseFallback(c, dead);
    }
    readRoute = null;
    readEndpoint = null;
    readStatements = 0;
  }

  /** Physical statements die with their connection's binding; the logical ones re-create themselves. */
  private void detachStatements(Connection physical) {
    for (int i = statements.size() - 1; i >= 0; i--) {
      statements.get(i).detach(physical);
    }
  }

  private boolean primaryInTransaction() throws SQLException {
    if (primary == null || autoCommit) return false;
    BaseConnection base = primary.unwrap(BaseConnection.class);
    return base.getTransactionState() != TransactionState.IDLE;
  }

  private boolean readInTransaction() {
    return read != null && !autoCommit && readStatements > 0;
  }

  void checkOpen() throws SQLException {
    if (closed) throw new SQLException("This connection has been closed.", "08003");
  }

  void register(LogicalStatement s) {
    statements.add(s);
  }

  void unregister(LogicalStatement s) {
    for (int i = statements.size() - 1; i >= 0; i--) {
      if (statements.get(i) == s) {
        statements.remove(i);
        return;
      }
    }
  }

  /**
   * In autocommit mode a read binding is no longer needed once no open statement uses it: give it
   * back now, so idle logical connections never pin replica or (scarce) fallback connections.
   */
  void statementClosed() {
    Connection r = read;
    if (r == null || !autoCommit) return;
    for (int i = statements.size() - 1; i >= 0; i--) {
      if (statements.get(i).boundTo(r)) return;
    }
    releaseRead(false);
  }

  /** The route of the current read-only binding, or null (for tests and diagnostics). */
  Route readRoute() {
    return readRoute;
  }

  Router router() {
    return router;
  }

  /**
   * Changes the staleness this connection's read-only work accepts, for the next unit of work.
   *
   * @param maxAge largest accepted replica lag; must be positive
   */
  public void setMaxAge(Duration maxAge) throws SQLException {
    if (maxAge == null || maxAge.isNegative() || maxAge.isZero()) {
      throw new SQLException("omnium: maxAge must be a positive duration, got " + maxAge, "HY000");
    }
    this.maxAgeNanos = maxAge.toNanos();
  }

  /** The staleness this connection's read-only work accepts. */
  public Duration getMaxAge() {
    return Duration.ofNanos(maxAgeNanos);
  }

  // ---------------------------------------------------------------- statements

  @Override
  public Statement createStatement() throws SQLException {
    return createStatement(java.sql.ResultSet.TYPE_FORWARD_ONLY, java.sql.ResultSet.CONCUR_READ_ONLY);
  }

  @Override
  public Statement createStatement(int resultSetType, int resultSetConcurrency) throws SQLException {
    return createStatement(resultSetType, resultSetConcurrency, UNSET);
  }

  @Override
  public Statement createStatement(int resultSetType, int resultSetConcurrency, int resultSetHoldability)
      throws SQLException {
    checkOpen();
    LogicalStatement s = new LogicalStatement(this, resultSetType, resultSetConcurrency, resultSetHoldability);
    register(s);
    return s;
  }

  @Override
  public PreparedStatement prepareStatement(String sql) throws SQLException {
    return prepare(sql, java.sql.ResultSet.TYPE_FORWARD_ONLY, java.sql.ResultSet.CONCUR_READ_ONLY, UNSET,
        UNSET, null, null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency)
      throws SQLException {
    return prepare(sql, resultSetType, resultSetConcurrency, UNSET, UNSET, null, null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency,
                                            int resultSetHoldability) throws SQLException {
    return prepare(sql, resultSetType, resultSetConcurrency, resultSetHoldability, UNSET, null, null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
    return prepare(sql, java.sql.ResultSet.TYPE_FORWARD_ONLY, java.sql.ResultSet.CONCUR_READ_ONLY, UNSET,
        autoGeneratedKeys, null, null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
    return prepare(sql, java.sql.ResultSet.TYPE_FORWARD_ONLY, java.sql.ResultSet.CONCUR_READ_ONLY, UNSET,
        UNSET, columnIndexes.clone(), null);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
    return prepare(sql, java.sql.ResultSet.TYPE_FORWARD_ONLY, java.sql.ResultSet.CONCUR_READ_ONLY, UNSET,
        UNSET, null, columnNames.clone());
  }

  private PreparedStatement prepare(String sql, int type, int concurrency, int holdability, int keys,
                                    int[] columnIndexes, String[] columnNames) throws SQLException {
    checkOpen();
    if (sql == null) throw new SQLException("omnium: SQL must not be null", "HY000");
    LogicalPreparedStatement s = new LogicalPreparedStatement(this, sql, type, concurrency, holdability, keys,
        columnIndexes, columnNames, false);
    register(s);
    return s;
  }

  @Override
  public CallableStatement prepareCall(String sql) throws SQLException {
    return prepareCall(sql, java.sql.ResultSet.TYPE_FORWARD_ONLY, java.sql.ResultSet.CONCUR_READ_ONLY, UNSET);
  }

  @Override
  public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency)
      throws SQLException {
    return prepareCall(sql, resultSetType, resultSetConcurrency, UNSET);
  }

  @Override
  public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency,
                                       int resultSetHoldability) throws SQLException {
    checkOpen();
    if (sql == null) throw new SQLException("omnium: SQL must not be null", "HY000");
    LogicalCallableStatement s = new LogicalCallableStatement(this, sql, resultSetType, resultSetConcurrency,
        resultSetHoldability);
    register(s);
    return s;
  }

  @Override
  public String nativeSQL(String sql) throws SQLException {
    return currentOrPrimary().nativeSQL(sql);
  }

  /** A bound connection if there is one, else the primary: for calls that only need some session. */
  private Connection currentOrPrimary() throws SQLException {
    checkOpen();
    Connection c = read != null ? read : primary;
    return c != null ? c : bindPrimary();
  }

  // ---------------------------------------------------------------- transactions

  @Override
  public void setAutoCommit(boolean autoCommit) throws SQLException {
    checkOpen();
    if (this.autoCommit == autoCommit) return;
    if (primary != null) primary.setAutoCommit(autoCommit); // pgjdbc commits an open transaction
    if (read != null) {
      if (autoCommit && readInTransaction()) read.commit();
      releaseRead(false); // the next read-only unit of work is routed afresh
    }
    readTxLost = null;
    this.autoCommit = autoCommit;
  }

  @Override
  public boolean getAutoCommit() throws SQLException {
    checkOpen();
    return autoCommit;
  }

  @Override
  public void commit() throws SQLException {
    checkOpen();
    if (autoCommit) throw new SQLException("Cannot commit when autoCommit is enabled.", "25P01");
    SQLException lost = readTxLost;
    if (lost != null) {
      readTxLost = null;
      throw new SQLException("omnium: the read-only transaction was lost before commit", lost.getSQLState(), lost);
    }
    if (primary != null) {
      boolean wrote = router.writePositions.enabled() && primaryInTransaction();
      primary.commit();
      if (wrote) afterPrimaryCommit();
    }
    if (read != null) {
      try {
        read.commit();
      } finally {
        releaseRead(false);
      }
    }
  }

  @Override
  public void rollback() throws SQLException {
    checkOpen();
    if (autoCommit) throw new SQLException("Cannot rollback when autoCommit is enabled.", "25P01");
    readTxLost = null;
    if (primary != null) primary.rollback();
    if (read != null) {
      try {
        read.rollback();
      } finally {
        releaseRead(false);
      }
    }
  }

  @Override
  public void rollback(Savepoint savepoint) throws SQLException {
    bindForSavepoint().rollback(savepoint);
  }

  @Override
  public Savepoint setSavepoint() throws SQLException {
    return bindForSavepoint().setSavepoint();
  }

  @Override
  public Savepoint setSavepoint(String name) throws SQLException {
    return bindForSavepoint().setSavepoint(name);
  }

  @Override
  public void releaseSavepoint(Savepoint savepoint) throws SQLException {
    bindForSavepoint().releaseSavepoint(savepoint);
  }

  /** Savepoints belong to the transaction in progress, wherever it was routed. */
  private Connection bindForSavepoint() throws SQLException {
    return currentTarget();
  }

  @Override
  public void setReadOnly(boolean readOnly) throws SQLException {
    checkOpen();
    if (this.readOnly == readOnly) return;
    if (readInTransaction() || primaryInTransaction()) {
      throw new SQLException("Cannot change transaction read-only property in the middle of a transaction.",
          SqlStates.ACTIVE_TRANSACTION);
    }
    if (!readOnly) releaseRead(false);
    this.readOnly = readOnly;
  }

  @Override
  public boolean isReadOnly() throws SQLException {
    checkOpen();
    return readOnly;
  }

  @Override
  public void setTransactionIsolation(int level) throws SQLException {
    checkOpen();
    if (primary != null) primary.setTransactionIsolation(level);
    if (read != null) read.setTransactionIsolation(level);
    this.isolation = level;
  }

  @Override
  public int getTransactionIsolation() throws SQLException {
    checkOpen();
    if (isolation != UNSET) return isolation;
    return primary != null ? primary.getTransactionIsolation() : TRANSACTION_READ_COMMITTED;
  }

  // ---------------------------------------------------------------- session state

  @Override
  public void setSchema(String schema) throws SQLException {
    checkOpen();
    if (primary != null) primary.setSchema(schema);
    if (read != null) read.setSchema(schema);
    this.schema = schema;
  }

  @Override
  public String getSchema() throws SQLException {
    checkOpen();
    if (schema != null) return schema;
    return currentOrPrimary().getSchema();
  }

  @Override
  public void setCatalog(String catalog) throws SQLException {
    checkOpen();
    this.catalog = catalog; // PostgreSQL has no catalogs to switch; pgjdbc ignores it too
  }

  @Override
  public String getCatalog() throws SQLException {
    checkOpen();
    return catalog != null ? catalog : router.config.database();
  }

  @Override
  public void setNetworkTimeout(Executor executor, int milliseconds) throws SQLException {
    checkOpen();
    if (milliseconds < 0) throw new SQLException("Network timeout must be a value greater than or equal to 0.", "HY000");
    if (primary != null) primary.setNetworkTimeout(executor, milliseconds);
    if (read != null) read.setNetworkTimeout(executor, milliseconds);
    this.networkTimeout = milliseconds;
    this.networkTimeoutExecutor = executor;
  }

  @Override
  public int getNetworkTimeout() throws SQLException {
    checkOpen();
    return networkTimeout == UNSET ? 0 : networkTimeout;
  }

  @Override
  public void setHoldability(int holdability) throws SQLException {
    checkOpen();
    if (primary != null) primary.setHoldability(holdability);
    if (read != null) read.setHoldability(holdability);
    this.holdability = holdability;
  }

  @Override
  public int getHoldability() throws SQLException {
    checkOpen();
    return holdability == UNSET ? java.sql.ResultSet.HOLD_CURSORS_OVER_COMMIT : holdability;
  }

  /** Client-info property carrying a write token (see {@link #requireWriteToken(String)}); not sent to the server. */
  public static final String WRITE_TOKEN_CLIENT_INFO = "OmniumWriteToken";

  @Override
  public void setClientInfo(String name, String value) throws SQLClientInfoException {
    if (closed) throw new SQLClientInfoException("This connection has been closed.", "08003", null);
    if (WRITE_TOKEN_CLIENT_INFO.equals(name)) {
      try {
        requireWriteToken(value);
      } catch (SQLException e) {
        throw new SQLClientInfoException(e.getMessage(), e.getSQLState(), null, e);
      }
      return;
    }
    Properties p = clientInfo != null ? clientInfo : new Properties();
    if (value == null) {
      p.remove(name);
    } else {
      p.setProperty(name, value);
    }
    clientInfo = p;
    if (primary != null) primary.setClientInfo(name, value);
    if (read != null) read.setClientInfo(name, value);
  }

  @Override
  public void setClientInfo(Properties properties) throws SQLClientInfoException {
    if (closed) throw new SQLClientInfoException("This connection has been closed.", "08003", null);
    Properties p = new Properties();
    if (properties != null) p.putAll(properties);
    clientInfo = p;
    if (primary != null) primary.setClientInfo(p);
    if (read != null) read.setClientInfo(p);
  }

  @Override
  public String getClientInfo(String name) throws SQLException {
    checkOpen();
    if (WRITE_TOKEN_CLIENT_INFO.equals(name)) return requiredLsn == 0 ? null : WritePositions.token(requiredLsn);
    return clientInfo == null ? null : clientInfo.getProperty(name);
  }

  @Override
  public Properties getClientInfo() throws SQLException {
    checkOpen();
    Properties p = new Properties();
    if (clientInfo != null) p.putAll(clientInfo);
    return p;
  }

  @Override
  public Map<String, Class<?>> getTypeMap() throws SQLException {
    checkOpen();
    return typeMap != null ? typeMap : new java.util.HashMap<>();
  }

  @Override
  public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
    checkOpen();
    if (primary != null) primary.setTypeMap(map);
    if (read != null) read.setTypeMap(map);
    this.typeMap = map;
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    checkOpen();
    SQLWarning w = primary != null ? primary.getWarnings() : null;
    SQLWarning r = read != null ? read.getWarnings() : null;
    if (w == null) return r;
    if (r != null) w.setNextWarning(r);
    return w;
  }

  @Override
  public void clearWarnings() throws SQLException {
    checkOpen();
    if (primary != null) primary.clearWarnings();
    if (read != null) read.clearWarnings();
  }

  @Override
  public DatabaseMetaData getMetaData() throws SQLException {
    checkOpen();
    return new MetaDataProxy(currentOrPrimary().getMetaData(), this);
  }

  // ---------------------------------------------------------------- factories bound to a session

  @Override public Clob createClob() throws SQLException { return currentOrPrimary().createClob(); }
  @Override public Blob createBlob() throws SQLException { return currentOrPrimary().createBlob(); }
  @Override public NClob createNClob() throws SQLException { return currentOrPrimary().createNClob(); }
  @Override public SQLXML createSQLXML() throws SQLException { return currentOrPrimary().createSQLXML(); }

  @Override
  public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
    return currentOrPrimary().createArrayOf(typeName, elements);
  }

  @Override
  public Struct createStruct(String typeName, Object[] attributes) throws SQLException {
    return currentOrPrimary().createStruct(typeName, attributes);
  }

  // ---------------------------------------------------------------- lifecycle

  /** Opens nothing when no physical connection is bound (design rule 7). */
  @Override
  public boolean isValid(int timeout) throws SQLException {
    if (timeout < 0) throw new SQLException("Invalid timeout (" + timeout + "<0).", "HY000");
    if (closed) return false;
    if (primary != null && !primary.isValid(timeout)) return false;
    return read == null || read.isValid(timeout);
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  /** Closes its statements, rolls back and returns or closes its physical connections. Idempotent. */
  @Override
  public void close() throws SQLException {
    if (closed) return;
    closed = true;
    for (int i = statements.size() - 1; i >= 0; i--) {
      statements.get(i).closeQuietly();
    }
    statements.clear();
    SQLException failure = null;
    if (read != null) {
      if (!autoCommit) {
        try {
          read.rollback();
        } catch (SQLException e) {
          failure = e;
        }
      }
      releaseRead(failure != null && SqlStates.connectionDead(failure));
    }
    Connection p = primary;
    primary = null;
    if (p != null) {
      boolean dead = false;
      if (!autoCommit) {
        try {
          p.rollback();
        } catch (SQLException e) {
          dead = SqlStates.connectionDead(e);
          if (failure == null) failure = e;
        }
      }
      primarySource.release(p, dead);
    }
  }

  @Override
  public void abort(Executor executor) throws SQLException {
    if (closed) return;
    closed = true;
    statements.clear();
    Connection r = read;
    if (r != null) releaseRead(true);
    Connection p = primary;
    primary = null;
    if (p != null) {
      try {
        p.abort(executor);
      } finally {
        primarySource.release(p, true);
      }
    }
  }

  // ---------------------------------------------------------------- JDBC 4.3 request boundaries

  @Override public void beginRequest() throws SQLException { checkOpen(); }

  /** The end of a request frees the read binding, as a pool would on return. */
  @Override
  public void endRequest() throws SQLException {
    if (closed) return;
    if (read != null && autoCommit) releaseRead(false);
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey shardingKey, ShardingKey superShardingKey, int timeout)
      throws SQLException {
    throw new java.sql.SQLFeatureNotSupportedException("omnium: sharding keys are not supported");
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey shardingKey, int timeout) throws SQLException {
    throw new java.sql.SQLFeatureNotSupportedException("omnium: sharding keys are not supported");
  }

  @Override
  public void setShardingKey(ShardingKey shardingKey, ShardingKey superShardingKey) throws SQLException {
    throw new java.sql.SQLFeatureNotSupportedException("omnium: sharding keys are not supported");
  }

  @Override
  public void setShardingKey(ShardingKey shardingKey) throws SQLException {
    throw new java.sql.SQLFeatureNotSupportedException("omnium: sharding keys are not supported");
  }

  // ---------------------------------------------------------------- wrapper

  /**
   * Honest unwrapping: this class for itself; anything else (e.g. {@code PGConnection} for COPY and
   * LISTEN) is answered by the primary connection, which is bound for it.
   */
  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) return iface.cast(this);
    checkOpen();
    return bindPrimary().unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || iface.isAssignableFrom(PgConnection.class);
  }

  @Override
  public String toString() {
    return "OmniumConnection[" + router.config.applicationName()
        + (readOnly ? ", read-only" : "") + (read != null ? ", bound to " + readRoute : "")
        + (primary != null ? ", primary bound" : "") + (closed ? ", closed" : "") + "]";
  }
}
