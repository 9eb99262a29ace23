package dev.omnium.jdbc;

import java.sql.Array;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.TimerTask;
import java.util.logging.Logger;
import org.postgresql.PGNotification;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.CachedQuery;
import org.postgresql.core.Encoding;
import org.postgresql.core.QueryExecutor;
import org.postgresql.core.ReplicationProtocol;
import org.postgresql.core.TransactionState;
import org.postgresql.core.TypeInfo;
import org.postgresql.core.Version;
import org.postgresql.fastpath.Fastpath;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.FieldMetadata;
import org.postgresql.jdbc.PgConnection;
import org.postgresql.jdbc.PreferQueryMode;
import org.postgresql.jdbc.TimestampUtils;
import org.postgresql.largeobject.LargeObjectManager;
import org.postgresql.replication.PGReplicationConnection;
import org.postgresql.util.LruCache;
import org.postgresql.util.PGobject;
import org.postgresql.xml.PGXmlFactoryFactory;

/**
 * pgjdbc's own connection API on the logical connection ({@link org.postgresql.PGConnection}, and
 * {@link BaseConnection}, which code casts to as often: large objects, {@code addDataType}, COPY,
 * notifications, server version checks). Each method runs on the session {@code unwrap} reaches:
 * the primary, bound for it, so session state such as {@code LISTEN}, COPY and data types stays
 * on the session read-write work runs on (a COPY FROM is remembered as a write for
 * read-your-writes). A few answer for the logical connection instead: the
 * default fetch size of its statements, its transaction state, and the large-object and fastpath
 * APIs and {@link #cancelQuery()}, which act on the session of the current unit of work (a
 * read-only transaction's large objects are read in that transaction).
 *
 * <p>{@link BaseConnection} is pgjdbc's internal interface; a pgjdbc version that changes it
 * changes this class (see docs/conformance.md).
 */
abstract class PgConnectionApi implements BaseConnection {

  /** The primary session, bound for the call, as pgjdbc's connection. */
  abstract BaseConnection pgPrimary() throws SQLException;

  /**
   * The primary session, bound, for pgjdbc's own objects or SQL run unseen: the session is
   * checked before a pool lends it again.
   */
  abstract BaseConnection pgRaw() throws SQLException;

  /** The session of the current unit of work (bound for it), as pgjdbc's connection. */
  abstract BaseConnection pgCurrent() throws SQLException;

  /** The bound session of the current unit of work, or null: nothing bound, nothing to ask. */
  abstract BaseConnection pgBound();

  /** A COPY FROM ended on the primary session: a commit in autocommit mode. */
  abstract void copied();

  /**
   * The primary session for the methods pgjdbc declares without {@link SQLException}: the error
   * of a connection that cannot bind one (closed, or the primary refused) travels unchecked.
   */
  final BaseConnection pgPrimaryUnchecked() {
    try {
      return pgPrimary();
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  // ---------------------------------------------------------------- wrapper

  /**
   * Honest unwrapping: this connection for what it is itself ({@code OmniumConnection},
   * {@code PGConnection}, {@code BaseConnection}: their methods run as described above); anything
   * else (pgjdbc's {@code PgConnection}) is answered by the primary session, bound for it and
   * checked before a pool lends it again. One exception: an open connection of
   * {@link OmniumDataSource} asked for {@code Connection} itself answers its pool's connection,
   * one object for every {@code getConnection()} its pooled state serves, as HikariCP's and
   * pgjdbc's own pooled connections answer their physical one (caches keyed by connection, an
   * OpenTelemetry agent's, then find it again). That object acts for the open connection of its
   * state: use it while this one is open; it fails with 08003 after, and its {@code close()}
   * closes this one.
   *
   * @param iface the interface or class wanted
   * @return this, its pool's connection, or the primary session's object
   * @throws SQLException 08003 when closed; pgjdbc's error when it wraps no such object
   */
  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface == Connection.class) {
      Connection pooled = pooledConnection();
      if (pooled != null) return iface.cast(pooled);
    }
    if (iface.isInstance(this)) return iface.cast(this);
    return pgRaw().unwrap(iface);
  }

  /** What {@link #unwrap} answers for {@code Connection}: a pool's connection, or null (this). */
  Connection pooledConnection() {
    return null;
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || iface.isAssignableFrom(PgConnection.class);
  }

  // ---------------------------------------------------------------- PGConnection

  @Override
  public Array createArrayOf(String typeName, Object elements) throws SQLException {
    return pgCurrent().createArrayOf(typeName, elements);
  }

  @Override
  public PGNotification[] getNotifications() throws SQLException {
    return pgPrimary().getNotifications();
  }

  @Override
  public PGNotification[] getNotifications(int timeoutMillis) throws SQLException {
    return pgPrimary().getNotifications(timeoutMillis);
  }

  /** pgjdbc's COPY on the primary session; a COPY FROM counts as a write (read-your-writes). */
  @Override
  public CopyManager getCopyAPI() throws SQLException {
    return new LogicalCopyManager(pgPrimary(), this::copied);
  }

  @Override
  public LargeObjectManager getLargeObjectAPI() throws SQLException {
    return pgCurrent().getLargeObjectAPI();
  }

  @Override
  @SuppressWarnings("deprecation")
  public Fastpath getFastpathAPI() throws SQLException {
    return pgCurrent().getFastpathAPI();
  }

  @Override
  @SuppressWarnings("deprecation")
  public void addDataType(String type, String className) {
    pgPrimaryUnchecked().addDataType(type, className);
  }

  @Override
  public void addDataType(String type, Class<? extends PGobject> klass) throws SQLException {
    pgPrimary().addDataType(type, klass);
  }

  @Override
  public void setPrepareThreshold(int threshold) {
    pgPrimaryUnchecked().setPrepareThreshold(threshold);
  }

  @Override
  public int getPrepareThreshold() {
    return pgPrimaryUnchecked().getPrepareThreshold();
  }

  @Override
  public int getBackendPID() {
    return pgPrimaryUnchecked().getBackendPID();
  }

  /** Cancels what runs on the session of the current unit of work; nothing when none is bound. */
  @Override
  public void cancelQuery() throws SQLException {
    BaseConnection c = pgBound();
    if (c != null) c.cancelQuery();
  }

  @Override
  public String escapeIdentifier(String identifier) throws SQLException {
    return pgPrimary().escapeIdentifier(identifier);
  }

  @Override
  public String escapeLiteral(String literal) throws SQLException {
    return pgPrimary().escapeLiteral(literal);
  }

  @Override
  public PreferQueryMode getPreferQueryMode() {
    return pgPrimaryUnchecked().getPreferQueryMode();
  }

  @Override
  public AutoSave getAutosave() {
    return pgPrimaryUnchecked().getAutosave();
  }

  @Override
  public void setAutosave(AutoSave autoSave) {
    pgPrimaryUnchecked().setAutosave(autoSave);
  }

  @Override
  public PGReplicationConnection getReplicationAPI() {
    return pgPrimaryUnchecked().getReplicationAPI();
  }

  @Override
  public void alterUserPassword(String user, char[] newPassword, String encryptionType)
      throws SQLException {
    pgPrimary().alterUserPassword(user, newPassword, encryptionType);
  }

  @Override
  public Map<String, String> getParameterStatuses() {
    return pgPrimaryUnchecked().getParameterStatuses();
  }

  @Override
  public String getParameterStatus(String parameterName) {
    return pgPrimaryUnchecked().getParameterStatus(parameterName);
  }

  @Override
  public void setAdaptiveFetch(boolean adaptiveFetch) {
    pgPrimaryUnchecked().setAdaptiveFetch(adaptiveFetch);
  }

  @Override
  public boolean getAdaptiveFetch() {
    return pgPrimaryUnchecked().getAdaptiveFetch();
  }

  // ---------------------------------------------------------------- BaseConnection

  @Override
  public ResultSet execSQLQuery(String s) throws SQLException {
    return pgRaw().execSQLQuery(s);
  }

  @Override
  public ResultSet execSQLQuery(String s, int resultSetType, int resultSetConcurrency)
      throws SQLException {
    return pgRaw().execSQLQuery(s, resultSetType, resultSetConcurrency);
  }

  @Override
  public void execSQLUpdate(String s) throws SQLException {
    pgRaw().execSQLUpdate(s);
  }

  @Override
  public QueryExecutor getQueryExecutor() {
    return pgPrimaryUnchecked().getQueryExecutor();
  }

  @Override
  public ReplicationProtocol getReplicationProtocol() {
    return pgPrimaryUnchecked().getReplicationProtocol();
  }

  @Override
  public Object getObject(String type, String value, byte[] byteValue) throws SQLException {
    return pgPrimary().getObject(type, value, byteValue);
  }

  @Override
  public Encoding getEncoding() throws SQLException {
    return pgPrimary().getEncoding();
  }

  @Override
  public TypeInfo getTypeInfo() {
    return pgPrimaryUnchecked().getTypeInfo();
  }

  @Override
  @SuppressWarnings("deprecation")
  public boolean haveMinimumServerVersion(int ver) {
    return pgPrimaryUnchecked().haveMinimumServerVersion(ver);
  }

  @Override
  public boolean haveMinimumServerVersion(Version ver) {
    return pgPrimaryUnchecked().haveMinimumServerVersion(ver);
  }

  @Override
  public byte[] encodeString(String str) throws SQLException {
    return pgPrimary().encodeString(str);
  }

  @Override
  public String escapeString(String str) throws SQLException {
    return pgPrimary().escapeString(str);
  }

  @Override
  public boolean getStandardConformingStrings() {
    return pgPrimaryUnchecked().getStandardConformingStrings();
  }

  @Override
  @SuppressWarnings("deprecation")
  public TimestampUtils getTimestampUtils() {
    return pgPrimaryUnchecked().getTimestampUtils();
  }

  @Override
  public Logger getLogger() {
    return pgPrimaryUnchecked().getLogger();
  }

  @Override
  public boolean getStringVarcharFlag() {
    return pgPrimaryUnchecked().getStringVarcharFlag();
  }

  /** The state of the current unit of work's transaction: IDLE when no session is bound. */
  @Override
  public TransactionState getTransactionState() {
    BaseConnection c = pgBound();
    return c == null ? TransactionState.IDLE : c.getTransactionState();
  }

  @Override
  public boolean binaryTransferSend(int oid) {
    return pgPrimaryUnchecked().binaryTransferSend(oid);
  }

  @Override
  public boolean isColumnSanitiserDisabled() {
    return pgPrimaryUnchecked().isColumnSanitiserDisabled();
  }

  @Override
  public void addTimerTask(TimerTask timerTask, long milliSeconds) {
    pgPrimaryUnchecked().addTimerTask(timerTask, milliSeconds);
  }

  @Override
  public void purgeTimerTasks() {
    pgPrimaryUnchecked().purgeTimerTasks();
  }

  @Override
  public LruCache<FieldMetadata.Key, FieldMetadata> getFieldMetadataCache() {
    return pgPrimaryUnchecked().getFieldMetadataCache();
  }

  @Override
  public CachedQuery createQuery(String sql, boolean escapeProcessing, boolean isParameterized,
      String... columnNames) throws SQLException {
    return pgPrimary().createQuery(sql, escapeProcessing, isParameterized, columnNames);
  }

  @Override
  public void setFlushCacheOnDeallocate(boolean flushCacheOnDeallocate) {
    pgPrimaryUnchecked().setFlushCacheOnDeallocate(flushCacheOnDeallocate);
  }

  @Override
  public boolean hintReadOnly() {
    return pgPrimaryUnchecked().hintReadOnly();
  }

  @Override
  public PGXmlFactoryFactory getXmlFactoryFactory() throws SQLException {
    return pgPrimary().getXmlFactoryFactory();
  }

  @Override
  public boolean getLogServerErrorDetail() {
    return pgPrimaryUnchecked().getLogServerErrorDetail();
  }

  @Override
  public boolean getConvertBooleanToNumeric() {
    return pgPrimaryUnchecked().getConvertBooleanToNumeric();
  }
}
