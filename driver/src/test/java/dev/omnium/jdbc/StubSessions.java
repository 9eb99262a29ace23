package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * Stub pgjdbc sessions for unit tests of the routing state machine, in the spirit of HikariCP's
 * test stubs: no server, every call recorded, the state a caller set answered back, the server's
 * ParameterStatus values settable. Also a HikariCP pool lending them, as the routes' pools do.
 */
final class StubSessions {
  private StubSessions() { }

  /** A router whose own pools reach nothing (nothing listens there): tests lend stubs instead. */
  static Router router(String applicationName) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", "unit");
    return new Router(OmniumConfig.of("jdbc:omnium:postgresql://127.0.0.1:9/db"
        + "?applicationName=" + applicationName + "&fallbackPoolSize=1", p), false);
  }

  /** One stub session's recorded life. */
  static final class Session {
    final List<String> calls = new CopyOnWriteArrayList<>();
    final List<String> sql = new CopyOnWriteArrayList<>();
    final Map<String, String> reported = new ConcurrentHashMap<>();
    final AtomicInteger closes = new AtomicInteger();
    final AtomicInteger aborts = new AtomicInteger();
    /** The server ended it: pgjdbc's {@code isClosed()} does not know before its next I/O. */
    volatile boolean ended;
    volatile boolean autoCommit = true;
    volatile int networkTimeout;
    volatile int holdability = ResultSet.CLOSE_CURSORS_AT_COMMIT;
    volatile Map<String, Class<?>> typeMap = new HashMap<>();
    /** What a {@link #pgSession()} answers for pgjdbc's transaction state. */
    volatile TransactionState transactionState = TransactionState.IDLE;
    Connection connection;

    Session() {
      reported.put("default_transaction_read_only", "on");
      reported.put("application_name", "unit:fallback");
      reported.put("TimeZone", "UTC");
      reported.put("DateStyle", "ISO, MDY");
    }

    boolean closed() {
      return closes.get() > 0 || aborts.get() > 0;
    }
  }

  static Session session() {
    Session s = new Session();
    s.connection = (Connection) Proxy.newProxyInstance(StubSessions.class.getClassLoader(),
        new Class<?>[] {Connection.class, PGConnection.class}, new ConnectionHandler(s));
    return s;
  }

  /**
   * A stub that is also pgjdbc's {@link BaseConnection}, as every real session is: it answers
   * {@link Session#transactionState}, where the omnium code asks pgjdbc about the transaction.
   */
  static Session pgSession() {
    Session s = new Session();
    s.connection = (Connection) Proxy.newProxyInstance(StubSessions.class.getClassLoader(),
        new Class<?>[] {BaseConnection.class}, new ConnectionHandler(s));
    return s;
  }

  private static final class ConnectionHandler implements InvocationHandler {
    private final Session s;

    ConnectionHandler(Session s) {
      this.s = s;
    }

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
      String name = m.getName();
      if (m.getDeclaringClass() == Object.class) {
        if (name.equals("equals")) return proxy == args[0];
        if (name.equals("hashCode")) return System.identityHashCode(proxy);
        return "StubSession@" + Integer.toHexString(System.identityHashCode(proxy));
      }
      s.calls.add(name);
      switch (name) {
        case "close": s.closes.incrementAndGet(); return null;
        case "abort": s.aborts.incrementAndGet(); return null;
        case "isClosed": return s.closed();
        case "isValid": return !s.closed() && !s.ended;
        case "getAutoCommit": return s.autoCommit;
        case "setAutoCommit": s.autoCommit = (Boolean) args[0]; return null;
        case "getTransactionIsolation": return Connection.TRANSACTION_READ_COMMITTED;
        case "getNetworkTimeout": return s.networkTimeout;
        case "setNetworkTimeout": s.networkTimeout = (Integer) args[1]; return null;
        case "getHoldability": return s.holdability;
        case "setHoldability": s.holdability = (Integer) args[0]; return null;
        case "getTypeMap": return s.typeMap;
        case "setTypeMap": s.typeMap = castMap(args[0]); return null;
        case "getParameterStatus": return s.reported.get((String) args[0]);
        case "getParameterStatuses": return Collections.unmodifiableMap(s.reported);
        case "unwrap": return ((Class<?>) args[0]).isInstance(proxy) ? proxy : fail(name);
        case "isWrapperFor": return ((Class<?>) args[0]).isInstance(proxy);
        case "createStatement": return statement(s);
        case "getTransactionState": return s.transactionState;
        default: return defaultValue(m.getReturnType());
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Class<?>> castMap(Object o) {
    return (Map<String, Class<?>>) o;
  }

  private static Object fail(String what) throws SQLException {
    throw new SQLException("stub: " + what, "HY000");
  }

  /**
   * A statement that records its SQL; a reset (ending with RESET ALL) restores the settings the
   * stub reports by default.
   */
  private static Statement statement(Session s) {
    ResultSet results = openResults();
    return (Statement) Proxy.newProxyInstance(StubSessions.class.getClassLoader(),
        new Class<?>[] {Statement.class}, (proxy, m, args) -> {
          if (m.getDeclaringClass() == Object.class) {
            return m.getName().equals("equals") ? proxy == args[0]
                : m.getName().equals("hashCode") ? System.identityHashCode(proxy) : "StubStatement";
          }
          if (m.getName().equals("getResultSet")) return results;
          if (m.getName().startsWith("execute") && args != null && args[0] instanceof String) {
            String sql = (String) args[0];
            s.sql.add(sql);
            if (sql.endsWith("RESET ALL")) s.reported.putAll(new Session().reported);
          }
          return defaultValue(m.getReturnType());
        });
  }

  /** A result set that is open until closed. */
  private static ResultSet openResults() {
    AtomicInteger closed = new AtomicInteger();
    return (ResultSet) Proxy.newProxyInstance(StubSessions.class.getClassLoader(),
        new Class<?>[] {ResultSet.class}, (proxy, m, args) -> {
          if (m.getDeclaringClass() == Object.class) {
            return m.getName().equals("equals") ? proxy == args[0]
                : m.getName().equals("hashCode") ? System.identityHashCode(proxy) : "StubResults";
          }
          if (m.getName().equals("close")) closed.incrementAndGet();
          if (m.getName().equals("isClosed")) return closed.get() > 0;
          return defaultValue(m.getReturnType());
        });
  }

  static Object defaultValue(Class<?> t) {
    if (t == boolean.class) return false;
    if (t == int.class) return 0;
    if (t == long.class) return 0L;
    if (t == void.class) return null;
    return t.isPrimitive() ? 0 : null;
  }

  /** A HikariCP pool that lends stub sessions, keeping every session it ever opened. */
  static final class StubPool implements AutoCloseable {
    final List<Session> opened = new CopyOnWriteArrayList<>();
    final HikariDataSource pool;

    StubPool(String name, int size) {
      HikariConfig hc = new HikariConfig();
      hc.setPoolName(name);
      hc.setMaximumPoolSize(size);
      hc.setMinimumIdle(0);
      hc.setConnectionTimeout(1000);
      hc.setAutoCommit(Route.REPLICA.lentAutoCommit); // as omnium's replica pools lend them
      hc.setDataSource(new StubDataSource(opened));
      pool = new HikariDataSource(hc);
    }

    int active() {
      return pool.getHikariPoolMXBean().getActiveConnections();
    }

    @Override
    public void close() {
      pool.close();
    }
  }

  private static final class StubDataSource extends DataSourceBase {
    private final List<Session> opened;

    StubDataSource(List<Session> opened) {
      this.opened = opened;
    }

    @Override
    public Connection getConnection() {
      Session s = session();
      opened.add(s);
      return s.connection;
    }
  }

  /** A {@link DataSource} whose subclass says only how it opens a connection. */
  abstract static class DataSourceBase implements DataSource {
    @Override public Connection getConnection(String user, String password) throws SQLException {
      return getConnection();
    }

    @Override public PrintWriter getLogWriter() { return null; }
    @Override public void setLogWriter(PrintWriter out) { }
    @Override public void setLoginTimeout(int seconds) { }
    @Override public int getLoginTimeout() { return 0; }
    @Override public Logger getParentLogger() { return Logger.getGlobal(); }
    @Override public <T> T unwrap(Class<T> iface) throws SQLException { throw new SQLException(); }
    @Override public boolean isWrapperFor(Class<?> iface) { return false; }
  }

  /** The stub session behind a (HikariCP proxy of a) connection. */
  static Session of(List<Session> sessions, Connection c) throws SQLException {
    PGConnection pg = c.unwrap(PGConnection.class);
    List<Session> all = new ArrayList<>(sessions);
    for (Session s : all) {
      if (s.connection == pg) return s;
    }
    throw new AssertionError("not a stub session: " + c);
  }
}
