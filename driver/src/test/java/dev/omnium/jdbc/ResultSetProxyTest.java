package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.omnium.jdbc.ParameterLogTest.Call;
import dev.omnium.jdbc.ParameterLogTest.Recorder;
import dev.omnium.jdbc.ParameterLogTest.Samples;
import dev.omnium.jdbc.gen.ProxySourceGenerator;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Wrapper;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

class ResultSetProxyTest {
  /** A vendor interface only the physical object implements. */
  interface VendorResultSet extends Wrapper { }

  private final Recorder physical = new Recorder();
  private final ResultSet delegate = physical.as(ResultSet.class);
  private final Statement owner = new Recorder().as(Statement.class);
  private final ResultSetProxy proxy = new ResultSetProxy(delegate, owner);

  @Test
  void getStatementAnswersTheOwnerAskingThePhysicalResultSetOnlyWhetherItIsClosed()
      throws SQLException {
    physical.answer = m -> m.getReturnType() == boolean.class ? false : null;
    assertSame(owner, proxy.getStatement());
    assertNull(new ResultSetProxy(delegate, null).getStatement());
    assertEquals(List.of("isClosed", "isClosed"),
        physical.calls.stream().map(c -> c.method().getName()).toList());
  }

  @Test
  void getStatementOfAClosedResultSetThrows55000AsPgjdbc() {
    physical.answer = m -> m.getReturnType() == boolean.class ? true : null;
    SQLException e = assertThrows(SQLException.class, proxy::getStatement);
    assertEquals("55000", e.getSQLState());
  }

  @Test
  void unwrapAnswersItselfForItsOwnTypes() throws SQLException {
    assertSame(proxy, proxy.unwrap(ResultSet.class));
    assertSame(proxy, proxy.unwrap(ResultSetProxy.class));
    assertSame(proxy, proxy.unwrap(Wrapper.class));
    assertSame(proxy, proxy.unwrap(Object.class));
    assertTrue(proxy.isWrapperFor(ResultSet.class));
    assertTrue(proxy.isWrapperFor(AutoCloseable.class));
    assertTrue(physical.calls.isEmpty(), physical.calls::toString);
  }

  @Test
  void unwrapAsksThePhysicalResultSetForOtherTypes() throws SQLException {
    VendorResultSet vendor = new Recorder().as(VendorResultSet.class);
    physical.answer = m -> m.getName().equals("unwrap") ? vendor : Boolean.TRUE;
    assertSame(vendor, proxy.unwrap(VendorResultSet.class));
    assertTrue(proxy.isWrapperFor(VendorResultSet.class));
    assertEquals(List.of("unwrap(" + VendorResultSet.class + ")",
        "isWrapperFor(" + VendorResultSet.class + ")"),
        physical.calls.stream().map(Call::toString).toList());

    Recorder refusing = new Recorder();
    refusing.answer = m -> Boolean.FALSE;
    assertFalse(new ResultSetProxy(refusing.as(ResultSet.class),
        owner).isWrapperFor(VendorResultSet.class));
  }

  @Test
  void exceptionsFromThePhysicalResultSetPassThroughUnchanged() throws Exception {
    SQLException failure = new SQLException("boom", "XX000");
    ResultSet throwing = (ResultSet) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {ResultSet.class}, (p, m, args) -> {
          throw failure;
        });
    ResultSetProxy wrapped = new ResultSetProxy(throwing, owner);
    assertSame(failure, assertThrows(SQLException.class, wrapped::next));
    assertSame(failure, assertThrows(SQLException.class, () -> wrapped.getString(1)));
    assertSame(failure, assertThrows(SQLException.class,
        () -> wrapped.unwrap(VendorResultSet.class)));
  }

  @Test
  void accessorsAndToString() {
    assertSame(delegate, proxy.delegate());
    assertEquals("ResultSetProxy[" + delegate + "]", proxy.toString());
    assertThrows(NullPointerException.class, () -> new ResultSetProxy(null, owner));
  }

  /**
   * Every other method, default methods included, reaches the physical result set verbatim and
   * returns its answer.
   */
  @TestFactory
  Stream<DynamicTest> everyOtherMethodPassesThrough() {
    return passThrough(ResultSet.class, Set.of("getStatement()", "unwrap(java.lang.Class)",
        "isWrapperFor(java.lang.Class)"), (rec, ignored)
            -> new ResultSetProxy(rec.as(ResultSet.class), owner));
  }

  /**
   * For each method of {@code iface} not in {@code special}: call it on a fresh wrapper around a
   * recording double with sample arguments, and check the double saw exactly that call and the
   * wrapper returned the double's answer.
   */
  static <T> Stream<DynamicTest> passThrough(Class<T> iface, Set<String> special,
      BiFunction<Recorder, Method, Object> wrapperFactory) {
    return ProxySourceGenerator.interfaceMethods(iface).stream()
        .filter(m -> !special.contains(ProxySourceGenerator.signature(m)))
        .map(m -> dynamicTest(ProxySourceGenerator.signature(m), () -> {
          Recorder rec = new Recorder();
          Object wrapper = wrapperFactory.apply(rec, m);
          Object[] args = Samples.arguments(m);
          Object expected = m.getReturnType() == void.class ? null
              : Samples.value(m.getReturnType(), 3);
          rec.answer = ignored -> expected;
          Object result;
          try {
            result = m.invoke(wrapper, args);
          } catch (InvocationTargetException e) {
            throw new AssertionError(m + " threw", e.getCause());
          }
          assertEquals(1, rec.calls.size(), () -> "calls: " + rec.calls);
          Call call = rec.calls.get(0);
          assertEquals(m.getName(), call.method().getName());
          assertArrayEquals(m.getParameterTypes(), call.method().getParameterTypes());
          for (int i = 0; i < args.length; i++) {
            if (m.getParameterTypes()[i].isPrimitive()) {
              assertEquals(args[i], call.args()[i], "argument " + i); // boxed again by reflection
            } else {
              assertSame(args[i], call.args()[i], "argument " + i);
            }
          }
          if (m.getReturnType().isPrimitive()) {
            assertEquals(expected, result);
          } else if (m.getReturnType() == ResultSet.class) {
            assertSame(expected, assertInstanceOf(ResultSetProxy.class, result).delegate());
          } else {
            assertSame(expected, result);
          }
        }));
  }

  @Nested
  class MetaDataProxyTest {
    private final Recorder physicalMetaData = new Recorder();
    private final Connection logical = new Recorder().as(Connection.class);
    private final MetaDataProxy metaData =
        new MetaDataProxy(physicalMetaData.as(DatabaseMetaData.class), logical);

    @Test
    void getConnectionAnswersTheLogicalConnection() throws SQLException {
      assertSame(logical, metaData.getConnection());
      assertTrue(physicalMetaData.calls.isEmpty(), physicalMetaData.calls::toString);
    }

    @Test
    void resultSetsComeBackWrappedWithoutAStatement() throws SQLException {
      Recorder openRs = new Recorder();
      openRs.answer = m -> m.getReturnType() == boolean.class ? false : null;
      ResultSet physicalRs = openRs.as(ResultSet.class);
      physicalMetaData.answer = m -> physicalRs;
      ResultSet tables = metaData.getTables(null, "public", "%", new String[] {"TABLE"});
      ResultSetProxy wrapped = assertInstanceOf(ResultSetProxy.class, tables);
      assertSame(physicalRs, wrapped.delegate());
      assertNull(wrapped.getStatement());
      assertSame(physicalRs, ((ResultSetProxy) metaData.getTypeInfo()).delegate());

      physicalMetaData.answer = m -> null;
      assertNull(metaData.getSchemas());
    }

    @Test
    void everyResultSetMethodIsWrapped() throws Exception {
      for (Method m : ProxySourceGenerator.interfaceMethods(DatabaseMetaData.class)) {
        if (m.getReturnType() != ResultSet.class) {
          continue;
        }
        Recorder openRs = new Recorder();
        openRs.answer = x -> x.getReturnType() == boolean.class ? false : null;
        ResultSet physicalRs = openRs.as(ResultSet.class);
        physicalMetaData.answer = ignored -> physicalRs;
        Object result = m.invoke(metaData, Samples.arguments(m));
        ResultSetProxy wrapped = assertInstanceOf(ResultSetProxy.class, result, m.toString());
        assertSame(physicalRs, wrapped.delegate(), m.toString());
        assertNull(wrapped.getStatement(), m.toString());
      }
    }

    @Test
    void unwrapIsHonest() throws SQLException {
      assertSame(metaData, metaData.unwrap(DatabaseMetaData.class));
      assertTrue(metaData.isWrapperFor(MetaDataProxy.class));
      assertTrue(physicalMetaData.calls.isEmpty());
      VendorResultSet vendor = new Recorder().as(VendorResultSet.class);
      physicalMetaData.answer = m -> m.getName().equals("unwrap") ? vendor : Boolean.FALSE;
      assertSame(vendor, metaData.unwrap(VendorResultSet.class));
      assertFalse(metaData.isWrapperFor(VendorResultSet.class));
      assertEquals(2, physicalMetaData.calls.size());
    }

    @Test
    void accessorsAndToString() {
      DatabaseMetaData physical = metaData.delegate();
      assertEquals("MetaDataProxy[" + physical + "]", metaData.toString());
      assertThrows(NullPointerException.class, () -> new MetaDataProxy(null, logical));
    }

    @TestFactory
    Stream<DynamicTest> everyOtherMethodPassesThrough() {
      return passThrough(DatabaseMetaData.class,
          Set.of("getConnection()", "unwrap(java.lang.Class)", "isWrapperFor(java.lang.Class)"),
          (rec, ignored) -> new MetaDataProxy(rec.as(DatabaseMetaData.class), logical));
    }
  }
}
