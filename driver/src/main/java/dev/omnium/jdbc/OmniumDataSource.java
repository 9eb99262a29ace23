package dev.omnium.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A pooled omnium {@link DataSource}: primary, replica and fallback pools in one object, with the
 * explicit intents of the design: {@link #write()} (the primary), {@link #read()} and
 * {@link #read(Duration)} (read-only connections with a staleness budget) and
 * {@link #readWithRetry(ReadWork)}.
 *
 * <pre>{@code
 * String url = "jdbc:omnium:postgresql://db1/app?replica=db2";
 * try (OmniumDataSource db = new OmniumDataSource(url)) {
 *   // a fresh replica, else the fallback pool
 *   try (Connection c = db.read(Duration.ofSeconds(2))) { ... }
 *   try (Connection c = db.write()) { ... }                    // the primary
 *   long n = db.readWithRetry(c -> count(c));                   // once more after a 40001
 *   PGConnection pg = db.write().unwrap(PGConnection.class);    // COPY, LISTEN
 * }
 * }</pre>
 *
 * <p>Configure it with the URL (and optionally {@link Properties}) before the first connection; the
 * pools start then. {@link #close()} closes every pool and thread it started. Errors are
 * {@link SQLException}s with a SQLState: {@code 08001} for a missing or invalid URL or key (the
 * message names the key), {@code 08003} once the data source is closed, {@code 08001} with a
 * {@link java.sql.SQLTransientConnectionException} when no primary or fallback session came within
 * {@code poolTimeout} (the message says why: the server's refusal, or every session of
 * {@code primaryPoolSize} or {@code fallbackPoolSize} in use), and the server's own SQLStates
 * otherwise.
 */
public final class OmniumDataSource implements DataSource, AutoCloseable {
  /**
   * A unit of read-only work for {@link #readWithRetry(ReadWork)}.
   *
   * @param <T> what the work returns
   */
  @FunctionalInterface
  public interface ReadWork<T> {
    /**
     * @param connection a read-only connection in a transaction; do not commit or close it
     * @return the result
     * @throws SQLException any error of the work
     */
    T run(Connection connection) throws SQLException;
  }

  /** States kept for later connections: bounded, found by the thread's own slot first. */
  private static final int FREE_SLOTS = 64;
  private static final int PROBES = 4;

  private final Object lock = new Object();
  /**
   * The states of connections closed cleanly on the thread that got them, each reset to what a
   * new one holds (no session, statement or user object): what getConnection() lends before it
   * allocates, as HikariCP lends a PoolEntry to a new ProxyConnection. Claimed with getAndSet,
   * so a state is in one slot or in one connection, never both.
   */
  private final AtomicReferenceArray<SessionState> free = new AtomicReferenceArray<>(FREE_SLOTS);
  /** What a closed connection keeps once its state went back: bound to nothing, never set. */
  private volatile SessionState closedState;
  private String url;
  private final Properties properties = new Properties();
  private volatile Router router;
  private volatile boolean closed;
  private PrintWriter logWriter;
  private int loginTimeout;

  /** An unconfigured data source: call {@link #setUrl(String)} before use. */
  public OmniumDataSource() {
  }

  /**
   * A data source for a {@code jdbc:omnium:postgresql://…} URL, checked at the first connection.
   *
   * @param url the URL
   */
  public OmniumDataSource(String url) {
    this.url = url;
  }

  /**
   * A data source for a URL plus properties; the URL's parameters win.
   *
   * @param url the URL
   * @param properties user, password, any pgjdbc or omnium key; copied; may be null
   */
  public OmniumDataSource(String url, Properties properties) {
    this.url = url;
    if (properties != null) this.properties.putAll(properties);
  }

  /**
   * Sets the {@code jdbc:omnium:postgresql://…} URL; only before the first connection.
   *
   * @param url the URL
   * @throws IllegalStateException after the first connection
   */
  public void setUrl(String url) {
    checkNotStarted();
    this.url = url;
  }

  /** @return the URL with any password masked, or null when none is set */
  public String getUrl() {
    return url == null ? null : Secrets.maskUrl(url);
  }

  /**
   * Sets the database user for every route (replicaUser overrides it on replicas).
   *
   * @param user the user; null removes it
   * @throws IllegalStateException after the first connection
   */
  public void setUser(String user) {
    setProperty("user", user);
  }

  /**
   * Sets the password for every route (replicaPassword overrides it on replicas).
   *
   * @param password the password; null removes it
   * @throws IllegalStateException after the first connection
   */
  public void setPassword(String password) {
    setProperty("password", password);
  }

  /**
   * Sets any pgjdbc or omnium property; URL parameters still win.
   *
   * @param key the property name
   * @param value its value; null removes it
   * @throws IllegalStateException after the first connection
   */
  public void setProperty(String key, String value) {
    checkNotStarted();
    if (value == null) {
      properties.remove(key);
    } else {
      properties.setProperty(key, value);
    }
  }

  private void checkNotStarted() {
    if (router != null) {
      throw new IllegalStateException(
          "omnium: the data source has started; configure it before use");
    }
  }

  private Router router() throws SQLException {
    Router r = router;
    if (r != null) return r;
    synchronized (lock) {
      if (closed) throw new SQLException("omnium: the data source is closed", "08003");
      if (router == null) {
        if (url == null) throw new SQLException("omnium: no URL set on the data source", "08001");
        OmniumConfig config = OmniumConfig.of(url, properties);
        // Nothing starts before a login proved the credentials: pgjdbc's error, as it is, else.
        Connection proving = Router.primaryLogin(config).connect();
        Router started;
        try {
          started = new Router(config, true, proving); // the primary pool's first session
        } catch (RuntimeException e) {
          closeQuietly(proving);
          throw e;
        }
        closedState = SessionState.ofClosedHandles(started);
        router = started; // published last: whoever sees the router sees the closed state
      }
      return router;
    }
  }

  /**
   * For unit tests of what needs no session (handles and their states): the pools start at once,
   * without the login that would prove the credentials (there is no server).
   */
  static OmniumDataSource startedWithoutLogin(String url) throws SQLException {
    OmniumDataSource ds = new OmniumDataSource(url);
    synchronized (ds.lock) {
      Router started = new Router(OmniumConfig.of(url, null), true);
      ds.closedState = SessionState.ofClosedHandles(started);
      ds.router = started;
    }
    return ds;
  }

  /**
   * A login with the data source's credentials was refused since the last one succeeded (a
   * password changed on the server): the next connection is handed out only after a login
   * succeeds again, as a new pgjdbc connection would need one. That login's session goes to the
   * primary pool. One volatile read otherwise.
   */
  private static void reprove(Router r) throws SQLException {
    if (!r.credentials.currentRefused()) return;
    Connection proving = Router.primaryLogin(r.config).connect(); // refused: pgjdbc's error
    r.credentials.loggedIn(r.credentials.digest(r.config));
    r.primaryConnector().seed(proving);
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // the login's session is gone either way
    }
  }

  /**
   * A connection for read-write work on the primary (read-only work still routes once it says
   * so). The first call logs in with the data source's credentials (as pgjdbc's connect does)
   * and, once that succeeded, starts the pools, the login's session the primary pool's first; a
   * refused login starts nothing and the data source may still be configured. Later calls log in
   * only after a login with the same credentials was refused (the password changed on the
   * server).
   *
   * @return a logical connection; no physical connection is bound before its first statement
   * @throws SQLException {@code 08003} when closed; {@code 08001} when the URL or a key is
   *     missing or invalid; pgjdbc's own error when the login fails (28P01, 3D000, 28000, 08006
   *     for TLS…)
   */
  @Override
  public OmniumConnection getConnection() throws SQLException {
    if (closed) throw new SQLException("omnium: the data source is closed", "08003");
    Router r = router();
    reprove(r);
    return new OmniumConnection(lend(r, false), false);
  }

  /** A state as new for a connection of the calling thread: a kept one, else a new one. */
  private SessionState lend(Router r, boolean fallbackOnly) {
    int home = slot();
    SessionState s = null;
    for (int i = 0; i < PROBES && s == null; i++) {
      int k = (home + i) & (FREE_SLOTS - 1);
      if (free.get(k) != null) s = free.getAndSet(k, null);
    }
    if (s == null) s = new SessionState(r, r.primary(), this);
    s.owner = Thread.currentThread();
    s.maxAgeNanos = r.defaultMaxAgeNanos;
    s.fallbackOnly = fallbackOnly;
    return s;
  }

  /**
   * A connection closed cleanly on its own thread gives its state back (see
   * {@link OmniumConnection#close()}): reset, then kept if a slot near the thread's is free.
   */
  void recycle(SessionState s) {
    s.reset();
    if (closed) return;
    int home = slot();
    for (int i = 0; i < PROBES; i++) {
      if (free.compareAndSet((home + i) & (FREE_SLOTS - 1), null, s)) return;
    }
  }

  SessionState closedState() {
    return closedState;
  }

  /** The calling thread's first slot: threads that borrow and give back stay apart. */
  private static int slot() {
    int h = System.identityHashCode(Thread.currentThread());
    return (h ^ (h >>> 16)) & (FREE_SLOTS - 1);
  }

  /**
   * Same as {@link #getConnection()}: the primary, for commands, locks and reads that must be
   * exact.
   *
   * @return a logical connection for read-write work
   * @throws SQLException as {@link #getConnection()}
   */
  public OmniumConnection write() throws SQLException {
    return getConnection();
  }

  /**
   * A read-only connection accepting the configured {@code maxAge}.
   *
   * @return a logical connection with {@code setReadOnly(true)}
   * @throws SQLException as {@link #getConnection()}
   */
  public OmniumConnection read() throws SQLException {
    OmniumConnection c = getConnection();
    c.setReadOnly(true);
    return c;
  }

  /**
   * A read-only connection accepting at most {@code maxAge} of replica lag.
   *
   * @param maxAge the staleness budget of this connection's reads
   * @return a logical connection with {@code setReadOnly(true)}
   * @throws SQLException as {@link #getConnection()}
   */
  public OmniumConnection read(Duration maxAge) throws SQLException {
    OmniumConnection c = read();
    c.setMaxAge(maxAge);
    return c;
  }

  /**
   * A read-only connection accepting at most {@code maxAge} of lag that also sees the write named
   * by
   * {@code token} (from {@link #lastWriteToken()} or {@link OmniumConnection#lastWriteToken()},
   * possibly of another process): a replica serves it only once it has replayed that write.
   *
   * @param maxAge the staleness budget of this connection's reads
   * @param token a write token, or null for none
   * @return a logical connection with {@code setReadOnly(true)}
   * @throws SQLException as {@link #getConnection()}; 22023 when the token is malformed
   */
  public OmniumConnection read(Duration maxAge, String token) throws SQLException {
    OmniumConnection c = read(maxAge);
    c.requireWriteToken(token);
    return c;
  }

  /**
   * The last write the calling thread committed through this data source, as an opaque token to
   * carry to another thread, request or service (a header, a cookie); null when none or when
   * {@code readYourWrites=off}.
   *
   * @return the token, or null
   * @throws SQLException as {@link #getConnection()} (the first call starts the pools)
   */
  public String lastWriteToken() throws SQLException {
    return router().writePositions.lastTokenOfThisThread();
  }

  /**
   * Runs {@code work} in one read-only transaction, committed when it returns. If the replica
   * cancels it with a recovery conflict (SQLState 40001) after it has already returned results to
   * the work, runs it once more, read-only on the primary through the fallback pool. Any other
   * error,
   * or a second failure, reaches the caller.
   *
   * @param <T> what the work returns
   * @param work the unit of work; it may run twice
   * @return what the work returned
   * @throws SQLException the work's error; {@code 40001} only when the second run failed too
   *     (the first failure is suppressed in it)
   */
  public <T> T readWithRetry(ReadWork<T> work) throws SQLException {
    Router r = router();
    try (OmniumConnection c = read()) {
      return runReadOnly(c, work);
    } catch (SQLException e) {
      if (!isSerializationFailure(e)) throw e;
      r.retries.increment();
      try (OmniumConnection c = new OmniumConnection(lend(r, true), false)) {
        c.setReadOnly(true);
        return runReadOnly(c, work);
      } catch (SQLException again) {
        again.addSuppressed(e);
        throw again;
      }
    }
  }

  private static <T> T runReadOnly(OmniumConnection c, ReadWork<T> work) throws SQLException {
    c.setAutoCommit(false);
    T result = work.run(c);
    c.commit();
    return result;
  }

  private static boolean isSerializationFailure(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException
          && SqlStates.SERIALIZATION_FAILURE.equals(((SQLException) t).getSQLState())) {
        return true;
      }
    }
    return false;
  }

  /**
   * Registers a listener told when a replica's lag alert fires and clears (starts the pools if
   * needed).
   *
   * @param listener called on the lag-watcher threads; return quickly
   * @throws SQLException as {@link #getConnection()}
   * @throws NullPointerException when {@code listener} is null
   */
  public void addLagAlertListener(LagAlertListener listener) throws SQLException {
    router().listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Removes a listener added with {@link #addLagAlertListener(LagAlertListener)}.
   *
   * @param listener the listener; unknown or null: nothing happens
   * @throws SQLException as {@link #getConnection()}
   */
  public void removeLagAlertListener(LagAlertListener listener) throws SQLException {
    router().listeners.remove(listener);
  }

  /**
   * Routing counters and lag, the same view JMX shows.
   *
   * @return this data source's router, live
   * @throws SQLException as {@link #getConnection()} (the first call starts the pools)
   */
  public RouterMXBean metrics() throws SQLException {
    return router();
  }

  /** Closes every pool, watcher thread and JMX bean this data source started. Idempotent. */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      for (int i = 0; i < FREE_SLOTS; i++) free.set(i, null);
      Router r = router;
      if (r != null) r.close();
    }
  }

  /** @return true once {@link #close()} ran */
  public boolean isClosed() {
    return closed;
  }

  /**
   * Not supported: credentials belong to the whole data source (its pools).
   *
   * @param username ignored
   * @param password ignored
   * @return never
   * @throws SQLFeatureNotSupportedException always (SQLState {@code 0A000})
   */
  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException(
        "omnium: set user and password on the data source or in its URL", "0A000");
  }

  @Override public PrintWriter getLogWriter() { return logWriter; }
  @Override public void setLogWriter(PrintWriter out) { this.logWriter = out; }
  @Override public void setLoginTimeout(int seconds) { this.loginTimeout = seconds; }
  @Override public int getLoginTimeout() { return loginTimeout; }
  @Override public Logger getParentLogger() { return Logger.getLogger("dev.omnium.jdbc"); }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) return iface.cast(this);
    throw new SQLException("omnium: OmniumDataSource does not wrap " + iface.getName(), "HY000");
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }

  @Override
  public String toString() {
    return "OmniumDataSource[" + (url == null ? "no URL" : Secrets.maskUrl(url))
        + (closed ? ", closed" : "") + "]";
  }
}
