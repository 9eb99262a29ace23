package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.net.MalformedURLException;
import java.net.URL;
import java.sql.CallableStatement;
import java.sql.Date;
import java.sql.JDBCType;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLWarning;
import java.sql.Time;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.GregorianCalendar;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TimeZone;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

class ParameterLogTest {

  /** Every recorded signature: record a sample call, replay it, see exactly that call. */
  @TestFactory
  Stream<DynamicTest> everyRecordedCallIsReplayedVerbatim() {
    return ProxyCompletenessTest.recordedCalls().stream()
        .map(m -> dynamicTest(ProxyCompletenessTest.signature(m), () -> replaysVerbatim(m)));
  }

  private static void replaysVerbatim(Method jdbc) throws Exception {
    Method own = ParameterLog.class.getDeclaredMethod(jdbc.getName(), jdbc.getParameterTypes());
    Object[] args = Samples.arguments(jdbc);
    ParameterLog log = new ParameterLog();
    assertTrue(log.isEmpty());
    invoke(own, log, args);
    assertFalse(log.isEmpty());

    for (int round = 0; round < 2; round++) { // applying does not consume the log
      Recorder physical = new Recorder();
      log.applyTo(physical.callable());
      assertEquals(1, physical.calls.size(), () -> "calls: " + physical.calls);
      Call call = physical.calls.get(0);
      assertEquals(jdbc.getName(), call.method().getName());
      assertArrayEquals(jdbc.getParameterTypes(), call.method().getParameterTypes(),
          () -> "replayed as " + call);
      for (int i = 0; i < args.length; i++) {
        assertTrue(Samples.same(args[i], call.args()[i]),
            "argument " + i + ": recorded " + args[i] + ", replayed " + call.args()[i]);
      }
    }
  }

  private static void invoke(Method m, Object target, Object... args) throws Exception {
    try {
      m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw (Exception) e.getCause();
    }
  }

  @Test
  void laterCallForTheSameIndexReplacesTheEarlierOne() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setInt(1, 1);
    log.setString(1, "a");
    log.setNull(1, Types.VARCHAR, "text");
    assertEquals(List.of("setNull(1, 12, text)"), replay(log));
  }

  @Test
  void settingOneIndexOverAndOverKeepsOneEntry() throws SQLException {
    ParameterLog log = new ParameterLog();
    for (int i = 0; i < 1_000_000; i++) {
      log.setInt(1, i);
      log.setLong(2, i);
    }
    assertEquals(List.of("setInt(1, 999999)", "setLong(2, 999999)"), replay(log));
    assertEquals("ParameterLog[values=2, outParameters=0]", log.toString());
  }

  @Test
  void replaysByIndexRegistrationFirstThenNamesAndOddIndexesInCallOrder() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setString(3, "c");
    log.setString("later", "n");
    log.setInt(2, 5);
    log.setInt(0, 9);
    log.registerOutParameter(2, Types.INTEGER);
    log.setInt(1, 1);
    log.registerOutParameter("out", JDBCType.VARCHAR);
    log.setInt(ParameterLog.MAX_DENSE_INDEX + 1, 7);
    log.setInt(ParameterLog.MAX_DENSE_INDEX, 6);
    log.setString("later", "m"); // replaced in place: keeps its position
    assertEquals(List.of(
        "setInt(1, 1)",
        "registerOutParameter(2, 4)",
        "setInt(2, 5)",
        "setString(3, c)",
        "setInt(65535, 6)",
        "setString(later, m)",
        "setInt(0, 9)",
        "registerOutParameter(out, VARCHAR)",
        "setInt(65536, 7)"), replay(log));
  }

  @Test
  void namedAndIndexedParametersAreDistinct() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setInt("a", 1);
    log.setInt(1, 2);
    log.setInt("a", 3);
    log.setInt("b", 4);
    log.registerOutParameter("a", Types.INTEGER); // a registration does not replace a value
    assertEquals(List.of("setInt(1, 2)", "setInt(a, 3)", "setInt(b, 4)",
        "registerOutParameter(a, 4)"),
        replay(log));
  }

  @Test
  void inOutParameterKeepsValueAndRegistration() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setInt(1, 10);
    log.registerOutParameter(1, Types.INTEGER);
    log.registerOutParameter(1, Types.BIGINT); // re-registration replaces
    assertEquals(List.of("registerOutParameter(1, -5)", "setInt(1, 10)"), replay(log));
    assertEquals("ParameterLog[values=1, outParameters=1]", log.toString());
  }

  @Test
  void copyIsIndependentInBothDirections() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setInt(1, 1);
    log.setString("n", "x");
    log.registerOutParameter(3, Types.INTEGER);
    ParameterLog batch = log.copy();

    log.setInt(1, 2);
    log.setInt(2, 3);
    log.setString("n", "y");
    log.clearParameters();
    log.setInt(4, 4);

    assertEquals(List.of("setInt(1, 1)", "registerOutParameter(3, 4)", "setString(n, x)"),
        replay(batch));

    batch.setString(1, "z");
    batch.registerOutParameter(3, Types.VARCHAR);
    assertEquals(List.of("registerOutParameter(3, 4)", "setInt(4, 4)"), replay(log));
    assertEquals(List.of("setString(1, z)", "registerOutParameter(3, 12)", "setString(n, x)"),
        replay(batch));
  }

  @Test
  void batchRowsShareUnchangedValuesAndKeepTheirOwn() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setInt(1, 1);
    log.setString(2, "a");
    log.setString("n", "x");
    ParameterLog row1 = log.copy();
    log.setString(2, "b"); // only parameter 2 changes for the next row
    ParameterLog row2 = log.copy();
    log.clearParameters();
    log.setInt(1, 3);
    ParameterLog row3 = log.copy();
    log.setInt(1, 4);

    assertEquals(List.of("setInt(1, 1)", "setString(2, a)", "setString(n, x)"), replay(row1));
    assertEquals(List.of("setInt(1, 1)", "setString(2, b)", "setString(n, x)"), replay(row2));
    assertEquals(List.of("setInt(1, 3)"), replay(row3));
    assertEquals(List.of("setInt(1, 4)"), replay(log));
    row1.clearParameters();
    assertEquals(List.of("setInt(1, 1)", "setString(2, b)", "setString(n, x)"), replay(row2));
  }

  @Test
  void copyOfAnEmptyOrClearedLogIsEmpty() throws SQLException {
    assertTrue(new ParameterLog().copy().isEmpty());
    ParameterLog log = new ParameterLog();
    log.setInt(5, 5);
    log.clearParameters();
    ParameterLog copy = log.copy();
    assertTrue(copy.isEmpty());
    assertEquals(List.of(), replay(copy));
    copy.setInt(9, 9);
    assertEquals(List.of("setInt(9, 9)"), replay(copy));
    assertTrue(log.isEmpty());
  }

  @Test
  void clearParametersForgetsValuesButKeepsRegistrations() throws SQLException {
    ParameterLog log = clearedWithRegistrations();
    assertFalse(log.isEmpty());
    assertEquals(List.of("registerOutParameter(1, 4)", "registerOutParameter(o, 12)"), replay(log));

    log.setInt(2, 4);
    log.setString("n", "w");
    assertEquals(List.of("registerOutParameter(1, 4)", "setInt(2, 4)",
        "registerOutParameter(o, 12)",
        "setString(n, w)"), replay(log));
  }

  @Test
  void clearedLogWithoutRegistrationsIsEmpty() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setInt(1, 1);
    log.setString("n", "v");
    log.setInt(100_000, 1);
    assertFalse(log.isEmpty());
    log.clearParameters();
    assertTrue(log.isEmpty());
    assertEquals(List.of(), replay(log));
    log.clearParameters();
    assertTrue(log.isEmpty());
  }

  @Test
  void namedParametersAndRegistrationsNeedACallableStatement() throws SQLException {
    PreparedStatement plain = new Recorder().prepared();

    ParameterLog indexed = new ParameterLog();
    indexed.setInt(1, 1);
    indexed.setObject(2, "x", JDBCType.VARCHAR);
    indexed.applyTo(plain);

    ParameterLog named = new ParameterLog();
    named.setInt("a", 1);
    SQLException e = assertThrows(SQLException.class, () -> named.applyTo(plain));
    assertTrue(e.getMessage().contains("CallableStatement"), e.getMessage());

    ParameterLog out = new ParameterLog();
    out.registerOutParameter(1, Types.INTEGER);
    assertThrows(SQLException.class, () -> out.applyTo(plain));
  }

  @Test
  void driverErrorsSurfaceWhenApplied() {
    ParameterLog log = new ParameterLog();
    log.setInt(0, 1); // recording never validates
    SQLException failure = new SQLException("The column index is out of range: 0", "22023");
    CallableStatement failing =
        (CallableStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {CallableStatement.class}, (proxy, m, args) -> {
          throw failure;
        });
    SQLException e = assertThrows(SQLException.class, () -> log.applyTo(failing));
    assertEquals(failure, e);
  }

  @Test
  void mutableValuesAreCopiedWhenRecorded() throws SQLException {
    byte[] buffer = {1, 2, 3};
    Timestamp ts = Timestamp.valueOf("2024-02-29 12:00:00.000000001");
    Calendar cal = new GregorianCalendar(TimeZone.getTimeZone("UTC"));
    int[] ints = {1, 2};
    ParameterLog log = new ParameterLog();
    log.setBytes(1, buffer);
    log.setTimestamp(2, ts, cal);
    log.setObject(3, ints);
    log.setObject(4, buffer, Types.BINARY);
    buffer[0] = 9;
    ts.setNanos(5);
    cal.setTimeZone(TimeZone.getTimeZone("Asia/Tokyo"));
    ints[0] = 9;

    Recorder physical = new Recorder();
    log.applyTo(physical.callable());
    assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) physical.calls.get(0).args()[1]);
    assertEquals(1, ((Timestamp) physical.calls.get(1).args()[1]).getNanos());
    assertEquals("UTC", ((Calendar) physical.calls.get(1).args()[2]).getTimeZone().getID());
    assertArrayEquals(new int[] {1, 2}, (int[]) physical.calls.get(2).args()[1]);
    assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) physical.calls.get(3).args()[1]);
    assertNotSame(buffer, physical.calls.get(0).args()[1]);
  }

  @Test
  void nullValuesAreReplayedAsNull() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setString(1, null);
    log.setObject(2, null);
    log.setBytes(3, null);
    log.setTimestamp(4, null, null);
    assertEquals(List.of("setString(1, null)", "setObject(2, null)", "setBytes(3, null)",
        "setTimestamp(4, null, null)"), replay(log));
  }

  @Test
  void floatingPointValuesKeepTheirBits() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.setDouble(1, -0.0);
    log.setFloat(2, Float.NaN);
    log.setDouble(3, Double.MIN_VALUE);
    log.setFloat(4, -Float.MAX_VALUE);
    log.setBoolean(5, false);
    log.setBoolean(6, true);
    log.setByte(7, Byte.MIN_VALUE);
    log.setShort(8, Short.MIN_VALUE);
    log.setLong(9, Long.MIN_VALUE);
    Recorder physical = new Recorder();
    log.applyTo(physical.callable());
    List<Object> values = physical.calls.stream().map(c
        -> c.args()[1]).collect(Collectors.toList());
    assertEquals(List.of(-0.0, Float.NaN, Double.MIN_VALUE, -Float.MAX_VALUE, false, true,
        Byte.MIN_VALUE,
        Short.MIN_VALUE, Long.MIN_VALUE), values);
  }

  @Test
  void streamsMakeTheLogNotReplayable() {
    ParameterLog log = new ParameterLog();
    assertTrue(log.isReplayable());
    log.setBytes(1, new byte[1]);
    log.registerOutParameter("o", Types.OTHER);
    assertTrue(log.isReplayable());
    log.setBinaryStream(2, new ByteArrayInputStream(new byte[1]), 1L);
    assertFalse(log.isReplayable());
    log.setInt(2, 1);
    assertTrue(log.isReplayable());
    log.setObject(3, new StringReader("x"));
    assertFalse(log.isReplayable());
    log.clearParameters();
    assertTrue(log.isReplayable());
    log.setCharacterStream("n", new StringReader("x"));
    assertFalse(log.isReplayable());
  }

  @Test
  void toStringShowsCountsNeverValues() {
    ParameterLog log = new ParameterLog();
    log.setString(1, "hunter2");
    log.setString("password", "hunter3");
    log.registerOutParameter(2, Types.VARCHAR);
    String text = log.toString();
    assertFalse(text.contains("hunter"), text);
    assertEquals("ParameterLog[values=2, outParameters=1]", text);
  }

  // ---------------------------------------------------------------------------------------------

  /** Replays {@code log} and renders each call as {@code name(arg, arg)}. */
  static List<String> replay(ParameterLog log) throws SQLException {
    Recorder physical = new Recorder();
    log.applyTo(physical.callable());
    return physical.calls.stream().map(Call::toString).collect(Collectors.toList());
  }

  /**
   * A log given out-parameters by index and by name, values by index and by name and at an odd
   * index, then cleared (clearParameters).
   */
  static ParameterLog clearedWithRegistrations() throws SQLException {
    ParameterLog log = new ParameterLog();
    log.registerOutParameter(1, Types.INTEGER);
    log.setInt(2, 3);
    log.setString("n", "v");
    log.registerOutParameter("o", Types.VARCHAR);
    log.setInt(-1, 1);
    log.clearParameters();
    return log;
  }

  /** One call seen by a {@link Recorder}. */
  record Call(Method method, Object[] args) {
    @Override
    public String toString() {
      return method.getName() + Arrays.stream(args).map(a -> a instanceof byte[]
          ? Arrays.toString((byte[]) a)
          : String.valueOf(a)).collect(Collectors.joining(", ", "(", ")"));
    }
  }

  /**
   * A JDBC object made with {@link Proxy} (tests only) that records every call and answers
   * {@link #answer} (by default a sample of the return type). {@code equals}, {@code hashCode}
   * and {@code toString} are identity-based and not recorded.
   */
  static final class Recorder implements InvocationHandler {
    final List<Call> calls = new ArrayList<>();
    Function<Method, Object> answer = m -> Samples.value(m.getReturnType(), 0);

    CallableStatement callable() {
      return as(CallableStatement.class);
    }

    PreparedStatement prepared() {
      return as(PreparedStatement.class);
    }

    <T> T as(Class<T> iface) {
      return iface.cast(Proxy.newProxyInstance(ParameterLogTest.class.getClassLoader(),
          new Class<?>[] {iface}, this));
    }

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) {
      if (m.getDeclaringClass() == Object.class) {
        switch (m.getName()) {
          case "equals":
            return proxy == args[0];
          case "hashCode":
            return System.identityHashCode(proxy);
          default:
            return "Recorder@" + Integer.toHexString(System.identityHashCode(proxy));
        }
      }
      calls.add(new Call(m, args == null ? new Object[0] : args.clone()));
      return m.getReturnType() == void.class ? null : answer.apply(m);
    }
  }

  /** Distinct, non-default sample values per type, and how to compare what came back. */
  static final class Samples {
    private Samples() { }

    /** Arguments for {@code m}: index 7 or name "p_name" first, then values by position. */
    static Object[] arguments(Method m) {
      Class<?>[] p = m.getParameterTypes();
      Object[] args = new Object[p.length];
      for (int i = 0; i < p.length; i++) {
        args[i] = i == 0 && p[0] == int.class ? 7 : i == 0 && p[0] == String.class ? "p_name"
            : value(p[i], i);
      }
      return args;
    }

    /**
     * A value of type {@code t}, different for different {@code position}s where the type allows.
     */
    static Object value(Class<?> t, int position) {
      if (t == int.class || t == Integer.class) {
        return 1000 + position;
      } else if (t == long.class || t == Long.class) {
        return 5_000_000_000L + position;
      } else if (t == short.class) {
        return (short) (300 + position);
      } else if (t == byte.class) {
        return (byte) (-10 - position);
      } else if (t == boolean.class) {
        return true;
      } else if (t == float.class) {
        return 1.5f + position;
      } else if (t == double.class) {
        return -2.25 - position;
      } else if (t == String.class) {
        return "s" + position;
      } else if (t == Object.class) {
        return new Object();
      } else if (t == BigDecimal.class) {
        return new BigDecimal("12.34" + position);
      } else if (t == byte[].class) {
        return new byte[] {1, 2, (byte) position};
      } else if (t == String[].class) {
        return new String[] {"TABLE", "VIEW" + position};
      } else if (t == int[].class) {
        return new int[] {1, position};
      } else if (t == Date.class) {
        return Date.valueOf("2024-02-29");
      } else if (t == Time.class) {
        return Time.valueOf("12:34:56");
      } else if (t == Timestamp.class) {
        return Timestamp.valueOf("2024-02-29 12:34:56.123456789");
      } else if (t == Calendar.class) {
        return new GregorianCalendar(TimeZone.getTimeZone("Europe/Paris"));
      } else if (t == InputStream.class) {
        return new ByteArrayInputStream(new byte[] {4, 5, 6});
      } else if (t == Reader.class) {
        return new StringReader("reader" + position);
      } else if (t == URL.class) {
        try {
          return new URL("http://omnium.invalid/" + position);
        } catch (MalformedURLException e) {
          throw new AssertionError(e);
        }
      } else if (t == SQLType.class) {
        return JDBCType.values()[position];
      } else if (t == Class.class) {
        return Integer.class;
      } else if (t == Map.class) {
        return Map.of("t" + position, Integer.class);
      } else if (t == SQLWarning.class) {
        return new SQLWarning("warning " + position);
      } else if (t.isEnum()) {
        return t.getEnumConstants()[position % t.getEnumConstants().length];
      } else if (t.isInterface()) {
        Recorder inert = new Recorder();
        inert.answer = m -> m.getReturnType().isPrimitive() ? value(m.getReturnType(), 0) : null;
        return inert.as(t);
      }
      throw new AssertionError("no sample value for " + t);
    }

    /**
     * Whether {@code actual} stands for {@code expected}: equal (arrays by content, so recorded
     * copies count), identical for URLs ({@code URL.equals} resolves host names).
     */
    static boolean same(Object expected, Object actual) {
      if (expected instanceof URL) {
        return expected == actual;
      }
      return Objects.deepEquals(expected, actual);
    }
  }
}
