package dev.omnium.jdbc;

import static dev.omnium.jdbc.ParameterLogTest.clearedWithRegistrations;
import static dev.omnium.jdbc.ParameterLogTest.replay;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.ParameterLogTest.Call;
import dev.omnium.jdbc.ParameterLogTest.Recorder;
import dev.omnium.jdbc.ParameterLogTest.Samples;
import dev.omnium.jdbc.StubSessions.Session;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;

/**
 * A logical connection recycles the parameter log of a closed prepared statement into the next
 * one: the next statement starts empty, a closed statement can never reach the log another one
 * now uses, and batch rows keep their values. The physical statements record what reaches them
 * (stub sessions, no server).
 */
class ParameterLogRecyclingTest {
  @RegisterExtension
  static final StubRouter ROUTER = new StubRouter("unit-parameter-log-recycling");

  /** A stub primary session whose prepared and callable statements record every call. */
  static final class Primary {
    final Session session = StubSessions.session();
    final List<Recorder> statements = Collections.synchronizedList(new ArrayList<>());
    /** Every createStatement, prepareStatement and prepareCall, as {@code name(arg, arg)}. */
    final List<String> creations = Collections.synchronizedList(new ArrayList<>());
    final Connection connection = (Connection) Proxy.newProxyInstance(
        ParameterLogRecyclingTest.class.getClassLoader(),
        new Class<?>[] {Connection.class, PGConnection.class}, (proxy, m, args) -> {
          String name = m.getName();
          if (name.equals("createStatement") || name.startsWith("prepare")) {
            creations.add(name + Arrays.deepToString(args == null ? new Object[0] : args));
          }
          if (name.equals("prepareStatement") || name.equals("prepareCall")) {
            Recorder r = new Recorder();
            statements.add(r);
            return r.callable();
          }
          try {
            return m.invoke(session.connection, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });

    /** The parameter calls (setters, registrations) the last physical statement received. */
    List<String> lastParameters() {
      Recorder r = statements.get(statements.size() - 1);
      return r.calls.stream()
          .filter(c -> c.method().getName().startsWith("set")
              || c.method().getName().equals("registerOutParameter"))
          .map(Call::toString).collect(Collectors.toList());
    }

    /** The setter and addBatch calls the {@code i}th physical statement received. */
    List<String> batchCalls(int i) {
      return statements.get(i).calls.stream()
          .map(Call::toString)
          .filter(s -> s.startsWith("set") || s.startsWith("addBatch"))
          .collect(Collectors.toList());
    }
  }

  static OmniumConnection on(Primary primary) {
    return ROUTER.on(primary.connection);
  }

  static ParameterLog logOf(PreparedStatement ps) {
    return ((LogicalPreparedStatement) ps).params;
  }

  @Test
  void theNextStatementTakesTheClosedOnesLogEmpty() throws Exception {
    Primary primary = new Primary();
    OmniumConnection c = on(primary);
    PreparedStatement first = c.prepareStatement("UPDATE t SET a = ? WHERE b = ?");
    ParameterLog log = logOf(first);
    first.setInt(1, 5);
    first.setString(2, "secret");
    first.executeUpdate();
    assertEquals(List.of("setInt(1, 5)", "setString(2, secret)"), primary.lastParameters());
    first.close();
    assertNull(logOf(first), "a closed statement keeps no reference to the log");

    PreparedStatement second = c.prepareStatement("UPDATE t SET a = ? WHERE b = ?");
    assertSame(log, logOf(second));
    assertTrue(log.isEmpty());
    second.setInt(2, 9);
    second.executeUpdate();
    assertEquals(List.of("setInt(2, 9)"), primary.lastParameters(), "nothing of the first");
    second.close();

    // steady state: one log serves every statement prepared and closed in turn
    for (int i = 0; i < 3; i++) {
      try (PreparedStatement ps = c.prepareStatement("SELECT ?")) {
        assertSame(log, logOf(ps));
        ps.setInt(1, i);
        ps.executeUpdate();
        assertEquals(List.of("setInt(1, " + i + ")"), primary.lastParameters());
      }
    }
    c.close();
  }

  @Test
  void statementsOpenAtOnceNeverShareALog() throws Exception {
    OmniumConnection c = on(new Primary());
    PreparedStatement a = c.prepareStatement("SELECT ?");
    ParameterLog recycled = logOf(a);
    a.close();
    PreparedStatement b = c.prepareStatement("SELECT ?");
    PreparedStatement d = c.prepareStatement("SELECT ?");
    assertSame(recycled, logOf(b));
    assertNotSame(logOf(b), logOf(d), "only one statement can take the spare log");
    b.setInt(1, 1);
    d.setInt(1, 2);
    b.close();
    assertEquals("ParameterLog[values=1, outParameters=0]", logOf(d).toString());
    c.close();
  }

  @Test
  void everySetterAndExecuteOfAClosedStatementFailsBeforeItTouchesAnyLog() throws Exception {
    Primary primary = new Primary();
    OmniumConnection c = on(primary);
    CallableStatement closed = c.prepareCall("{call f(?, ?)}");
    closed.close();
    CallableStatement now = c.prepareCall("{call f(?, ?)}"); // holds the closed one's log
    now.setInt(1, 42);
    now.registerOutParameter(2, Types.INTEGER);
    String before = logOf(now).toString();

    int calls = 0;
    for (Method m : ProxyCompletenessTest.recordedCalls()) {
      SQLException e = invokeFailing(m, closed, Samples.arguments(m));
      assertTrue(e.getSQLState().equals("55000") || e.getSQLState().equals("0A000"),
          m + ": " + e.getSQLState());
      calls++;
    }
    assertTrue(calls > 100, "every recorded setter was tried: " + calls);
    for (String name : List.of("clearParameters", "addBatch", "execute", "executeQuery",
        "executeUpdate", "executeLargeUpdate", "executeBatch", "getMetaData")) {
      Method m = PreparedStatement.class.getMethod(name);
      assertEquals("55000", invokeFailing(m, closed, new Object[0]).getSQLState(), name);
    }

    assertEquals(before, logOf(now).toString());
    now.execute();
    assertEquals(List.of("setInt(1, 42)", "registerOutParameter(2, 4)"),
        primary.lastParameters(), "exactly what the open statement set");
    c.close();
  }

  private static SQLException invokeFailing(Method m, Object target, Object[] args) {
    InvocationTargetException e = assertThrows(InvocationTargetException.class,
        () -> m.invoke(target, args), m.toString());
    assertTrue(e.getCause() instanceof SQLException, m + ": " + e.getCause());
    return (SQLException) e.getCause();
  }

  @Test
  void aPendingBatchIsDroppedWithItsStatementAndRowsKeepTheirValues() throws Exception {
    Primary primary = new Primary();
    OmniumConnection c = on(primary);
    c.setAutoCommit(false);
    PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?, ?)");
    ps.setInt(1, 1);
    ps.setString(2, "a");
    ps.addBatch();
    ps.setInt(1, 2);
    ps.addBatch();
    ps.executeBatch();
    assertEquals(List.of("setInt(1, 1)", "setString(2, a)", "addBatch()",
        "setInt(1, 2)", "setString(2, a)", "addBatch()"), primary.batchCalls(0));

    ps.setInt(1, 3);
    ps.addBatch(); // pending when the statement closes
    ps.close();
    PreparedStatement next = c.prepareStatement("INSERT INTO t VALUES (?, ?)");
    next.setInt(2, 7);
    next.addBatch();
    next.executeBatch();
    assertEquals(List.of("setInt(2, 7)", "addBatch()"), primary.batchCalls(1),
        "nothing of the closed one");
    c.rollback();
    c.close();
  }

  @Test
  void aSnapshotKeepsItsValuesWhenItsLogIsRecycled() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setInt(1, 1);
    log.setString(2, "a");
    ParameterLog row = log.copy(); // shares both entries
    log.setInt(1, 2); // a fresh entry: the row keeps its own
    assertTrue(log.recycle());
    assertTrue(log.isEmpty());
    log.setInt(1, 3);
    log.setString(2, "b");
    assertEquals(List.of("setInt(1, 1)", "setString(2, a)"), replay(row));
    assertEquals(List.of("setInt(1, 3)", "setString(2, b)"), replay(log));
  }

  @Test
  void recyclingForgetsValuesRegistrationsAndNames() throws SQLException {
    ParameterLog log = clearedWithRegistrations();
    assertFalse(log.isEmpty(), "clearParameters keeps registrations");
    assertTrue(log.recycle());
    assertTrue(log.isEmpty());
    assertEquals(List.of(), replay(log));
    assertEquals("ParameterLog[values=0, outParameters=0]", log.toString());
    log.setString("n", "w");
    log.setInt(2, 4);
    assertEquals(List.of("setInt(2, 4)", "setString(n, w)"), replay(log));
  }

  @Test
  void aLogWithLargeTablesIsNotKept() throws Exception {
    ParameterLog large = new ParameterLog();
    large.setInt(ParameterLogBase.MAX_RECYCLED_TABLE, 1);
    assertFalse(large.recycle());
    ParameterLog small = new ParameterLog();
    small.setInt(ParameterLogBase.MAX_RECYCLED_TABLE - 1, 1);
    assertTrue(small.recycle());

    OmniumConnection c = on(new Primary());
    String sql = "SELECT " + String.join(", ",
        Collections.nCopies(ParameterLogBase.MAX_RECYCLED_TABLE, "?"));
    PreparedStatement wide = c.prepareStatement(sql);
    ParameterLog log = logOf(wide);
    wide.setInt(ParameterLogBase.MAX_RECYCLED_TABLE, 1);
    wide.close();
    PreparedStatement next = c.prepareStatement("SELECT ?");
    assertNotSame(log, logOf(next));
    assertTrue(logOf(next).isEmpty());
    c.close();
  }

  @Test
  void threadsPreparingAtOnceNeverTakeTheSameLog() throws Exception {
    OmniumConnection c = on(new Primary());
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int i = 0; i < 500; i++) {
        c.recycle(new ParameterLog());
        CountDownLatch start = new CountDownLatch(1);
        Future<ParameterLog> a = pool.submit(() -> {
          start.await();
          return c.takeParameterLog();
        });
        Future<ParameterLog> b = pool.submit(() -> {
          start.await();
          return c.takeParameterLog();
        });
        start.countDown();
        ParameterLog la = a.get(30, TimeUnit.SECONDS);
        ParameterLog lb = b.get(30, TimeUnit.SECONDS);
        assertNotNull(la);
        assertNotSame(la, lb);
      }
    } finally {
      pool.shutdownNow();
      c.close();
    }
  }
}
