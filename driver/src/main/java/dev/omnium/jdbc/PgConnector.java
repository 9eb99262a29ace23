package dev.omnium.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.Driver;

/**
 * Opens pgjdbc connections for one route. Calls pgjdbc's driver directly instead of going through
 * {@code DriverManager}, so our own physical connects never re-enter this driver (or an agent's
 * interception of it) and never pick a different driver registered for the same URL.
 * Doubles as the {@link DataSource} the internal HikariCP pools draw from.
 */
final class PgConnector implements DataSource, PoolWait.Refusals {
  private static final Driver PG = new Driver();

  /** Told of every login of a connector whose logins prove or disprove a credential set. */
  interface Logins {
    /** A login with the set of {@code digest} succeeded. */
    void loggedIn(String digest);

    /** A login with the set of {@code digest} failed with {@code e}. */
    void refused(String digest, SQLException e);
  }

  /**
   * Agent hook (the only line of the driver the javaagent depends on): every physical connect
   * carries this property. The omnium javaagent (module agent/) intercepts
   * {@code org.postgresql.Driver.connect} to take over the application's {@code jdbc:postgresql:}
   * connections; it leaves a connect carrying this key to pgjdbc, so the driver's own physical
   * connections never recurse into it. pgjdbc ignores properties it does not know.
   */
  static final String PHYSICAL_MARKER = "omnium.physical";

  private final String url;
  /** Replaced whole (never mutated) when the credentials rotate: a connect reads it once. */
  private volatile Properties props;
  private final String description;
  /** Replica pools: refuse a session whose server says it is a primary (RoleSignal). */
  private final boolean standbyOnly;
  /**
   * Fallback route: one single-host URL per listed primary host, tried in turn (the last primary
   * first) until one is a primary; null for a plain connector. Its sessions start read-only, which
   * pgjdbc's targetServerType=primary would take for a standby.
   */
  private final String[] primaryCandidates;
  private volatile int lastPrimary;
  private volatile int loginTimeoutSeconds;
  /** Set when the router closes: nothing waits for a connect in flight, nothing new is kept. */
  private volatile boolean closing;
  /** Connects under way, for {@link #getLoginTimeout()} once closing. */
  private final AtomicInteger connecting = new AtomicInteger();
  /** A pool's connector: the sessions it opened, held weakly ({@link #feedingPool()}); or null. */
  private volatile Set<Connection> opened;
  /** Who hears of this connector's logins, and the credential set its properties hold. */
  private volatile Logins logins;
  private volatile String digest;
  /**
   * Replica side: rotated credentials not yet proven here, tried first at each login (replaced
   * whole, as {@link #props}); adopted by the first login they pass. Null when none.
   */
  private volatile Properties candidate;
  private volatile String candidateDigest;
  /**
   * The server's answer to the latest login when it refused it (a wrong password, an unknown
   * database, an untrusted certificate: {@link SqlStates#loginRefused}); null after a login that
   * succeeded, or that failed otherwise (a server down or slow). See {@link PoolWait}.
   */
  private volatile PoolWait.Refused refusal;
  /** A session a login already opened (the one that proved the credentials), lent first. */
  private Connection seed; // guarded by this
  /** How its sessions get the route's settings (startup packet or per transaction); or null. */
  private StartupSettings startup;

  PgConnector(String url, Properties props, String description) {
    this(url, props, description, false);
  }

  PgConnector(String url, Properties props, String description, boolean standbyOnly) {
    this(url, props, description, standbyOnly, null);
  }

  /** The primary among {@code hostUrls}, whatever its sessions' default_transaction_read_only. */
  static PgConnector primaryAmong(List<String> hostUrls, Properties props, String description) {
    return new PgConnector(hostUrls.get(0), props, description, false,
        hostUrls.toArray(new String[0]));
  }

  private PgConnector(String url, Properties props, String description, boolean standbyOnly,
                      String[] primaryCandidates) {
    this.standbyOnly = standbyOnly;
    this.primaryCandidates = primaryCandidates;
    this.url = url;
    Properties marked = new Properties();
    for (String key : props.stringPropertyNames()) marked.setProperty(key, props.getProperty(key));
    marked.setProperty(PHYSICAL_MARKER, "true"); // see PHYSICAL_MARKER: the agent's recursion guard
    this.props = marked;
    this.description = description;
  }

  /**
   * Makes its sessions' settings travel in the startup packet until a server turns out to sit
   * behind a pooler, and with each transaction from then on (see {@link StartupSettings}).
   *
   * @return this connector
   */
  PgConnector settingsBy(StartupSettings settings) {
    this.startup = settings;
    return this;
  }

  /** What each transaction of its sessions must set; null while the startup packet does it. */
  TransactionSettings perTransaction() {
    StartupSettings s = startup;
    return s == null ? null : s.perTransaction();
  }

  /**
   * Its settings where a pooler pins sessions and each sets them once when it opens; null where
   * the startup packet carries them or each transaction does.
   */
  PinnedSettings pinned() {
    StartupSettings s = startup;
    return s == null ? null : s.pinned();
  }

  /**
   * Reports this connector's logins to {@code logins} (null: to no one) as logins with the
   * credential set {@code digest}, which its properties hold.
   */
  void reportTo(Logins logins, String digest) {
    this.digest = digest;
    this.logins = logins;
  }

  /**
   * Credential rotation, proven on the primary: physical connections opened from now on use
   * {@code secrets} (the secret keys, such as password, of the latest proven configuration)
   * instead of the current ones. Connections already open keep their sessions.
   *
   * @param secrets every secret key of the route with its value; keys missing here are dropped
   * @param digest the credential set they belong to
   */
  void useSecrets(Map<String, String> secrets, String digest) {
    props = withSecrets(secrets);
    this.digest = digest;
    candidate = null;
  }

  /**
   * Credential rotation not proven where this connector logs in (a replica): tried first at each
   * login from now on and adopted by the first that succeeds; refused, the current ones serve.
   */
  void offerSecrets(Map<String, String> secrets, String digest) {
    candidateDigest = digest;
    candidate = withSecrets(secrets);
  }

  private Properties withSecrets(Map<String, String> secrets) {
    Properties fresh = new Properties();
    Properties now = props;
    for (String key : now.stringPropertyNames()) {
      if (!Secrets.isSecretKey(key)) fresh.setProperty(key, now.getProperty(key));
    }
    secrets.forEach(fresh::setProperty);
    return fresh;
  }

  /**
   * Gives this connector a session a login already opened with its credentials (the login that
   * proved them): its next connect returns it instead of logging in again. One waits at most; a
   * second is closed.
   */
  void seed(Connection session) {
    Set<Connection> sessions = opened;
    if (sessions != null) sessions.add(session); // closed with the router if never lent
    synchronized (this) {
      if (seed == null) {
        seed = session;
        return;
      }
    }
    closeQuietly(session);
  }

  private synchronized Connection takeSeed() {
    Connection s = seed;
    seed = null;
    return s;
  }

  /**
   * What its next login uses: the offered set while one waits to be proven here, else its own.
   * A new object whenever the credentials rotate, so a session that waits after a refused login
   * ({@link IntervalSession}) sees when trying again can help.
   */
  Object nextCredentials() {
    Properties c = candidate;
    return c != null ? c : props;
  }

  /** The credential set this connector logs in with (its digest), for tests. */
  String credentialSet() {
    return digest;
  }

  /** The set it tries first, not proven here yet; null when none. For tests. */
  String candidateSet() {
    return candidate == null ? null : candidateDigest;
  }

  /** The server's refusal of the latest login, or null: see {@link #refusal}. */
  @Override
  public PoolWait.Refused refused() {
    return refusal;
  }

  Connection connect() throws SQLException {
    // no span for a connect's own statements (a role check on PostgreSQL < 14), nor for HikariCP's
    // validation of what an internal pool's adder thread opened
    if (opened != null) Tracing.quietPoolAdder();
    Object quiet = Tracing.quietBegin();
    connecting.incrementAndGet();
    try {
      // after counting itself: getLoginTimeout either sees this connect or it sees closing here
      if (closing) throw new SQLException("omnium: " + description + " is closed", "08003");
      Connection seeded = takeSeed();
      if (seeded != null && servesStill(seeded)) return seeded;
      Properties next = candidate;
      if (next != null) {
        String nextDigest = candidateDigest;
        try {
          Connection c = open(next, nextDigest);
          if (candidate == next) {
            props = next;
            digest = nextDigest;
            candidate = null;
          }
          return c;
        } catch (SQLException e) {
          if (!SqlStates.credentialsRefused(e)) throw e;
          // refused here (yet): the credentials this connector had still serve
        }
      }
      return open(props, digest);
    } finally {
      connecting.decrementAndGet();
      Tracing.quietEnd(quiet);
    }
  }

  /**
   * Whether a seed, which may have waited since its login, is still served: the server may have
   * ended it meanwhile, which pgjdbc learns only at its next I/O. One round trip, once per seed: a
   * pool's first session is where HikariCP learns the default isolation level for good, and one
   * that fails there with a class 08 error leaves the pool setting level -1 on every later
   * session, which pgjdbc refuses (HikariCP issues 887 and 2269). Closed when it is not.
   */
  private boolean servesStill(Connection seeded) {
    try {
      if (!seeded.isClosed() && seeded.isValid(Math.max(1, loginTimeoutSeconds))) return true;
    } catch (SQLException | RuntimeException e) {
      // not served: a login takes its place
    }
    closeQuietly(seeded);
    return false;
  }

  /** One login with {@code props}; its outcome is recorded and reported as {@code set}'s. */
  private Connection open(Properties props, String set) throws SQLException {
    Connection c;
    try {
      c = login(props);
    } catch (SQLException e) {
      refusal = SqlStates.loginRefused(e) ? new PoolWait.Refused(e, System.nanoTime()) : null;
      Logins l = logins;
      if (l != null && set != null) l.refused(set, e);
      throw e;
    }
    refusal = null;
    Logins l = logins;
    if (l != null && set != null) l.loggedIn(set);
    return c;
  }

  private Connection login(Properties props) throws SQLException {
    StartupSettings st = startup;
    Connection c;
    boolean sentOptions = st != null && st.sendsOptions();
    // the proof of session pinning: client connections of the same pool, without the options
    SessionPinning.Opener opener = () -> connectOnce(StartupSettings.withoutOptions(props));
    try {
      c = connectOnce(st == null || sentOptions ? props : st.forConnect(props, description));
    } catch (SQLException e) {
      if (st == null || !st.refused(e, description, sentOptions, opener)) throw e;
      sentOptions = false;
      // without the options a pooler refused
      c = connectOnce(st.forConnect(props, description));
    }
    if (c == null) {
      throw new SQLException("omnium: pgjdbc refused the URL for " + description, "08001");
    }
    if (st != null) {
      try {
        st.settle(c, description, sentOptions, opener);
      } catch (SQLException | RuntimeException e) {
        c.close();
        throw e;
      }
    }
    Set<Connection> sessions = opened;
    // before reading closing: a sweep that misses this session has set closing before it looked
    if (sessions != null) sessions.add(c);
    if (closing) {
      // A pool's connect that was in flight when it shut down: its pool would drop it unclosed.
      c.close();
      throw new SQLException("omnium: " + description + " is closed", "08003");
    }
    if (standbyOnly && RoleSignal.reportsPrimary(c)) {
      c.close();
      ReplicasByHost.promoted(host(url)); // the replica pools of every router on it stop now
      throw new SQLException("omnium: " + description + " is a primary now (in_hot_standby=off),"
          + " not a standby: no replica session is opened on it", "08001");
    }
    return c;
  }

  private Connection connectOnce(Properties p) throws SQLException {
    int login = loginTimeoutSeconds;
    if (login > 0 && p.getProperty("loginTimeout") == null) {
      Properties q = new Properties();
      q.putAll(p);
      q.setProperty("loginTimeout", Integer.toString(login));
      p = q;
    }
    return primaryCandidates != null ? connectPrimary(p) : PG.connect(url, p);
  }

  /**
   * The router closes: HikariCP's shutdown waits {@link #getLoginTimeout()} for connects in flight
   * (seconds when a server is down or frozen); from now on it waits for none, no connect starts,
   * and one that completes later closes its session at once.
   */
  void closing() {
    closing = true;
  }

  /** Whether {@link #closing()} was called: a caller about to connect gives up. */
  boolean isClosing() {
    return closing;
  }

  /**
   * Makes this the connector of an internal pool: it remembers the sessions it opens (weakly), so
   * that {@link #closeUnpooled()} can close those its pool never took in.
   *
   * @return this connector
   */
  PgConnector feedingPool() {
    opened = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
    return this;
  }

  /**
   * After {@link #closing()} and the shutdown of its pool: closes every session this connector
   * opened that is still open. HikariCP (7.0) drops a session whose setup ends after its shutdown
   * without closing it ("ConcurrentBag has been closed, ignoring add()"); the server would keep it
   * until the garbage collector found it. Sessions the pool lent are closed (or aborted) by its
   * shutdown already, as HikariCP does for every pool.
   */
  void closeUnpooled() {
    Set<Connection> sessions = opened;
    if (sessions == null) return;
    List<Connection> open;
    synchronized (sessions) {
      open = new ArrayList<>(sessions);
      sessions.clear();
    }
    for (Connection c : open) closeQuietly(c);
  }

  private static void closeQuietly(Connection c) {
    try {
      if (!c.isClosed()) c.close();
    } catch (SQLException | RuntimeException ignored) {
      // its socket is closed either way: nothing else to do for a session nobody holds
    }
  }

  private Connection connectPrimary(Properties p) throws SQLException {
    String[] urls = primaryCandidates;
    int start = lastPrimary;
    StringBuilder why = new StringBuilder();
    SQLException first = null;
    SQLException refused = null;
    boolean otherwise = false;
    for (int k = 0; k < urls.length; k++) {
      int i = (start + k) % urls.length;
      Connection c;
      try {
        c = PG.connect(urls[i], p);
      } catch (SQLException e) {
        if (first == null) first = e;
        if (SqlStates.loginRefused(e)) {
          if (refused == null) refused = e;
        } else {
          otherwise = true;
        }
        why.append(why.length() == 0 ? "" : "; ").append(host(urls[i])).append(": ")
            .append(e.getMessage());
        continue;
      }
      if (c != null && RoleSignal.isPrimary(c)) {
        lastPrimary = i;
        return c;
      }
      if (c != null) c.close();
      why.append(why.length() == 0 ? "" : "; ").append(host(urls[i])).append(": a standby");
    }
    // every host that answered refused the login: the server's own error, as pgjdbc reports it
    if (refused != null && !otherwise) throw refused;
    throw new SQLException("omnium: no primary among the hosts of " + description + " (" + why
        + ")", first == null ? "08001" : first.getSQLState(), first);
  }

  /** {@code host:port} of a single-host pgjdbc URL, for messages (no credentials in it). */
  private static String host(String url) {
    int start = url.indexOf("//") + 2;
    int end = url.indexOf('/', start);
    return end < 0 ? url.substring(start) : url.substring(start, end);
  }

  @Override public Connection getConnection() throws SQLException { return connect(); }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("omnium: credentials come from the omnium URL");
  }

  @Override public PrintWriter getLogWriter() { return null; }
  @Override public void setLogWriter(PrintWriter out) { }
  @Override public void setLoginTimeout(int seconds) { loginTimeoutSeconds = seconds; }
  /**
   * Once closing, HikariCP's shutdown waits this long for its session adder: 0 while a connect is
   * under way (it may hang on a frozen server), else 1, which returns as soon as the idle adder
   * thread has ended (with 0 HikariCP logs "Timed-out waiting for add connection executor to
   * shutdown" on a close soon after any add).
   */
  @Override
  public int getLoginTimeout() {
    if (!closing) return loginTimeoutSeconds;
    return connecting.get() == 0 ? 1 : 0;
  }
  @Override public Logger getParentLogger() { return Logger.getLogger("dev.omnium.jdbc"); }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) return iface.cast(this);
    throw new SQLException("omnium: not a wrapper for " + iface.getName());
  }

  @Override public boolean isWrapperFor(Class<?> iface) { return iface.isInstance(this); }

  /** Never shows the properties: they hold the password. */
  @Override public String toString() { return "PgConnector[" + description + "]"; }
}
