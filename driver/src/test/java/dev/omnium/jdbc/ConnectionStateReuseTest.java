package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * DataSource mode lends a closed connection's state to the next getConnection(), as HikariCP
 * lends a PoolEntry to a new ProxyConnection: the new connection starts as a new one would, and
 * the closed handle answers every call exactly as a closed connection that kept its state.
 * Nothing here reaches a server (the URL points where nothing listens): no session is bound.
 */
class ConnectionStateReuseTest {
  private static final String URL = "jdbc:omnium:postgresql://127.0.0.1:9/db"
      + "?applicationName=unit-reuse&primaryPoolSize=1&fallbackPoolSize=1&user=unit"
      + "&poolTimeout=250ms";

  private OmniumDataSource ds;

  @BeforeEach
  void start() throws SQLException {
    ds = OmniumDataSource.startedWithoutLogin(URL); // nothing to log in to: no proof here
  }

  @AfterEach
  void stop() {
    ds.close();
  }

  /** Sets every piece of JDBC and omnium state a connection keeps without a session. */
  private static void changeEverything(OmniumConnection c) throws SQLException {
    c.setReadOnly(true);
    c.setAutoCommit(false);
    c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
    c.setSchema("elsewhere");
    c.setHoldability(ResultSet.HOLD_CURSORS_OVER_COMMIT);
    c.setNetworkTimeout(Runnable::run, 1234);
    c.setClientInfo("ApplicationName", "mine");
    c.setTypeMap(Map.of("t", String.class));
    c.setMaxAge(Duration.ofSeconds(7));
    c.createStatement(); // left open: closed by close()
  }

  /** What a connection answers without a session, as one string. */
  private static String answers(OmniumConnection c) throws SQLException {
    return List.of(c.getAutoCommit(), c.isReadOnly(), c.getTransactionIsolation(),
        c.getHoldability(), c.getNetworkTimeout(), c.getClientInfo(),
        String.valueOf(c.getClientInfo("ApplicationName")), c.getTypeMap(), c.getMaxAge(),
        String.valueOf(c.lastWriteToken()),
        String.valueOf(c.getClientInfo(OmniumConnection.WRITE_TOKEN_CLIENT_INFO)), c.isClosed(),
        c.isValid(1), c.getCatalog(), c.getWarnings() == null).toString();
  }

  @Test
  void aConnectionClosedOnItsThreadLendsItsStateToTheNextOneAsNew() throws Exception {
    String asNew;
    try (OmniumConnection fresh = ds.getConnection()) {
      asNew = answers(fresh);
    }
    OmniumConnection first = ds.getConnection();
    SessionState state = first.state;
    changeEverything(first);
    assertEquals(1, state.statements.size());
    first.close();
    assertTrue(first.isClosed());
    assertNotSame(state, first.state, "the closed handle let go of its state");

    OmniumConnection second = ds.getConnection();
    assertNotSame(first, second, "a new handle per getConnection()");
    assertSame(state, second.state, "the state was lent again");
    assertEquals(asNew, answers(second), "it answers as a new connection does");
    assertEquals(0, state.set);
    assertNull(state.schema);
    assertNull(state.clientInfo);
    assertNull(state.typeMap);
    assertNull(state.networkTimeoutExecutor);
    assertTrue(state.statements.isEmpty());
    assertSame(Thread.currentThread(), state.owner);
    second.close();
  }

  @Test
  void aClosedHandleAnswersExactlyAsAClosedConnectionThatKeptItsState() throws Exception {
    Router router = (Router) ds.metrics();
    // the reference: a connection whose state is never lent again (driver mode's)
    OmniumConnection kept = new OmniumConnection(router, router.primary(),
        router.defaultMaxAgeNanos, false);
    kept.close();
    OmniumConnection lent = ds.getConnection();
    SessionState state = lent.state;
    lent.close();
    OmniumConnection next = ds.getConnection();
    assertSame(state, next.state);
    next.setReadOnly(true);
    next.setAutoCommit(false);
    Statement open = next.createStatement();

    List<String> differences = new ArrayList<>();
    int closedErrors = 0;
    for (Method m : publicMethods()) {
      Object[] args = defaults(m.getParameterTypes());
      String expected = outcome(m, kept, args);
      String actual = outcome(m, lent, args);
      if (!expected.equals(actual)) differences.add(m + ": " + expected + " / " + actual);
      if (actual.contains("08003")) closedErrors++;
    }
    assertEquals(List.of(), differences, "closed handle vs closed connection");
    assertTrue(closedErrors > 40, "most calls fail with 08003: " + closedErrors);

    // nothing the closed handle was asked reached the connection that holds the state now
    assertTrue(next.isReadOnly());
    assertFalse(next.getAutoCommit());
    assertEquals(Connection.TRANSACTION_READ_COMMITTED, next.getTransactionIsolation());
    assertEquals(0, next.state.set);
    assertEquals(List.of(open), new ArrayList<>(next.state.statements));
    assertFalse(lent.toString().contains("read-only"), lent.toString());
    next.close();
    assertTrue(open.isClosed());
  }

  @Test
  void aConnectionClosedByAnotherThreadKeepsItsState() throws Exception {
    OmniumConnection c = ds.getConnection();
    SessionState state = c.state;
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread closer = new Thread(() -> {
      try {
        c.close();
      } catch (Throwable t) {
        failed.set(t);
      }
    });
    closer.start();
    closer.join(10_000);
    assertFalse(closer.isAlive());
    assertNull(failed.get());
    assertTrue(c.isClosed());
    assertNotLentAgain(state, c, "the owner's call may still be running");
  }

  @Test
  void aConnectionWhoseLastStatementRanOnAnotherThreadKeepsItsState() throws Exception {
    OmniumConnection c = ds.getConnection();
    SessionState state = c.state;
    Statement st = c.createStatement();
    AtomicReference<SQLException> failed = new AtomicReference<>();
    Thread worker = new Thread(() -> {
      try {
        st.execute("SELECT 1"); // nothing listens there: it fails, after it was routed
      } catch (SQLException e) {
        failed.set(e);
      }
    });
    worker.start();
    worker.join(30_000);
    assertFalse(worker.isAlive());
    assertTrue(failed.get() != null, "the statement was routed and failed");
    // class 08 whether or not the pool saw the refusal before its timeout
    assertEquals("08001", failed.get().getSQLState(), String.valueOf(failed.get()));
    c.close(); // on the thread that got it, but another ran its last statement
    assertNotLentAgain(state, c, "that thread may still be in a call");
  }

  /** Closed, {@code c} kept {@code state} ({@code why}); the next connection gets another one. */
  private void assertNotLentAgain(SessionState state, OmniumConnection c, String why)
      throws SQLException {
    assertSame(state, c.state, "not lent again: " + why);
    try (OmniumConnection other = ds.getConnection()) {
      assertNotSame(state, other.state);
    }
  }

  @Test
  void aConnectionGivenAWriteTokenKeepsItsStateAndAnAbortedOneToo() throws Exception {
    OmniumConnection c = ds.getConnection();
    SessionState state = c.state;
    String token = WritePositions.token(0x1000L);
    c.requireWriteToken(token);
    c.close();
    assertSame(state, c.state, "its write record is its own");
    assertNull(c.lastWriteToken());
    OmniumConnection aborted = ds.getConnection();
    SessionState abortedState = aborted.state;
    assertNotSame(state, abortedState);
    aborted.abort(Runnable::run);
    aborted.close();
    assertSame(abortedState, aborted.state);
    try (OmniumConnection other = ds.getConnection()) {
      assertNotSame(abortedState, other.state);
      assertNull(other.getClientInfo(OmniumConnection.WRITE_TOKEN_CLIENT_INFO));
    }
  }

  @Test
  void aStateGoesToOneConnectionAtATime() throws Exception {
    OmniumConnection a = ds.getConnection();
    OmniumConnection b = ds.getConnection();
    assertNotSame(a.state, b.state);
    SessionState sa = a.state;
    a.close();
    OmniumConnection c = ds.getConnection();
    OmniumConnection d = ds.getConnection();
    assertSame(sa, c.state);
    assertNotSame(sa, d.state, "lent once");
    b.close();
    c.close();
    d.close();
    ds.close();
    assertTrue(c.isClosed());
  }

  @Test
  void manyThreadsNeverShareAState() throws Exception {
    Set<SessionState> inUse = ConcurrentHashMap.newKeySet();
    Set<SessionState> seen = ConcurrentHashMap.newKeySet();
    AtomicInteger shared = new AtomicInteger();
    int threads = 8;
    int rounds = 2_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      CountDownLatch go = new CountDownLatch(1);
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          go.await();
          for (int i = 0; i < rounds; i++) {
            OmniumConnection c = ds.getConnection();
            SessionState s = c.state;
            if (!inUse.add(s) || s.owner != Thread.currentThread()) shared.incrementAndGet();
            seen.add(s);
            c.setReadOnly(true);
            c.setAutoCommit(false);
            if (!c.isReadOnly() || c.getAutoCommit()) shared.incrementAndGet();
            inUse.remove(s);
            c.close();
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : done) f.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertEquals(0, shared.get(), "a state served two open connections at once");
    // each thread finds its own state again, bar a few taken by a thread of a nearby slot
    assertTrue(seen.size() < threads * rounds / 20, "states are reused, not one per connection: "
        + seen.size() + " for " + threads * rounds);
  }

  @Test
  void aConnectionLentAgainAllocatesOnlyItsHandle() throws Exception {
    // bytes, not time: the count does not depend on the machine's load
    ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
    long self = Thread.currentThread().getId();
    for (int i = 0; i < 20_000; i++) spring(ds);
    int cycles = 10_000;
    long before = threads.getThreadAllocatedBytes(self);
    for (int i = 0; i < cycles; i++) spring(ds);
    long perCycle = (threads.getThreadAllocatedBytes(self) - before) / cycles;
    // the handle is 24 B (one more field would make it 32); a state of its own (SessionState,
    // ReadBindings, ConnectionWrites, the statement list) would be over 200 B more
    assertTrue(perCycle < 32, perCycle + " B per getConnection() and close()");
  }

  /** What Spring does around a read-only transaction, without a statement (no session). */
  private static void spring(OmniumDataSource ds) throws SQLException {
    OmniumConnection c = ds.getConnection();
    c.setReadOnly(true);
    c.setAutoCommit(false);
    c.commit();
    c.setAutoCommit(true);
    c.setReadOnly(false);
    c.close();
  }

  /** Connection's methods and OmniumConnection's own public ones, in a stable order. */
  private static List<Method> publicMethods() {
    List<Method> methods = new ArrayList<>();
    for (Method m : OmniumConnection.class.getMethods()) {
      if (m.getDeclaringClass() == Object.class || Modifier.isStatic(m.getModifiers())) continue;
      if (m.getName().equals("toString") || m.getName().equals("hashCode")) continue;
      methods.add(m);
    }
    methods.sort(Comparator.comparing(Method::toString));
    return methods;
  }

  private static Object[] defaults(Class<?>[] types) {
    Object[] args = new Object[types.length];
    for (int i = 0; i < types.length; i++) {
      Class<?> t = types[i];
      if (t == int.class) {
        args[i] = 0;
      } else if (t == long.class) {
        args[i] = 0L;
      } else if (t == boolean.class) {
        args[i] = false;
      } else if (t == String.class) {
        args[i] = "x";
      } else if (t == Class.class) {
        args[i] = Connection.class;
      } else if (t == Properties.class) {
        args[i] = new Properties();
      } else if (t == Duration.class) {
        args[i] = Duration.ofSeconds(1);
      } else if (t.isArray()) {
        args[i] = Array.newInstance(t.getComponentType(), 0);
      }
    }
    return args;
  }

  /** What a call did: the exception (class, SQLState, message) or the kind of value returned. */
  private static String outcome(Method m, Object target, Object[] args) {
    try {
      Object r = m.invoke(target, args);
      if (r == null) return "null";
      if (r instanceof Number || r instanceof Boolean || r instanceof String
          || r instanceof Duration || r instanceof Map) {
        return "returned " + r;
      }
      return "returned a " + r.getClass().getSimpleName();
    } catch (InvocationTargetException e) {
      Throwable t = e.getCause();
      String state = t instanceof SQLException ? ((SQLException) t).getSQLState() : "-";
      return "threw " + t.getClass().getSimpleName() + " " + state + " " + t.getMessage();
    } catch (IllegalAccessException e) {
      throw new AssertionError(e);
    }
  }
}
