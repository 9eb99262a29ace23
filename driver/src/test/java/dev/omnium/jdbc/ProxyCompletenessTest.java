package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.omnium.jdbc.gen.ProxySourceGenerator;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Fails the build when a wrapper silently falls back to an interface default method or misses
 * a JDBC method, typically after a JDK upgrade adds one (as OpenTelemetry's {@code WrapperTest}).
 * The check runs against the interfaces of the JDK that runs the tests.
 */
class ProxyCompletenessTest {

  /**
   * A wrapper class and the interface it must implement completely: every method of the
   * interface (defaults and inherited {@code Wrapper}/{@code AutoCloseable} methods included)
   * must be declared, non-abstract, by the class or by one of its superclasses below
   * {@code Object} (a hand-written abstract base counts), never left to an interface default.
   * {@code mayInherit} lists signatures such as {@code "beginRequest()"} that the class
   * deliberately leaves to the interface's default method.
   */
  record Delegate(Class<?> type, Class<?> iface, Set<String> mayInherit) {
    Delegate(Class<?> type, Class<?> iface) {
      this(type, iface, Set.of());
    }

    @Override
    public String toString() {
      return type.getSimpleName() + " implements " + iface.getSimpleName();
    }
  }

  /** Add every delegating class of the driver here. */
  static final List<Delegate> DELEGATES = List.of(
      new Delegate(ResultSetProxy.class, ResultSet.class),
      new Delegate(MetaDataProxy.class, DatabaseMetaData.class),
      new Delegate(OmniumConnection.class, Connection.class),
      new Delegate(LogicalStatement.class, Statement.class),
      new Delegate(PreparedStatementProxy.class, PreparedStatement.class),
      new Delegate(CallableStatementProxy.class, CallableStatement.class),
      new Delegate(ReplicaSession.class, Connection.class));

  /**
   * The classes the generator writes: final, package-private, regenerated rather than edited,
   * each the only subclass of a hand-written abstract class that carries the logic.
   */
  static final List<Class<?>> GENERATED = List.of(CallableStatementProxy.class, MetaDataProxy.class,
      ParameterLog.class, PreparedStatementProxy.class, ReplicaSession.class, ResultSetProxy.class);

  /** PreparedStatement setters that change statement settings, not parameters. */
  static final Set<String> STATEMENT_SETTERS = Set.of(
      "setCursorName", "setEscapeProcessing", "setFetchDirection", "setFetchSize",
      "setMaxFieldSize", "setMaxRows", "setLargeMaxRows", "setPoolable", "setQueryTimeout");

  @TestFactory
  Stream<DynamicTest> everyInterfaceMethodIsImplemented() {
    return DELEGATES.stream().map(d -> dynamicTest(d.toString(), () -> {
      assertTrue(d.iface().isAssignableFrom(d.type()), d + ": does not implement the interface");
      List<String> missing = new ArrayList<>();
      for (Method m : d.iface().getMethods()) {
        if (Modifier.isStatic(m.getModifiers()) || d.mayInherit().contains(signature(m))) {
          continue;
        }
        if (implementation(d.type(), m) == null) {
          missing.add(m.getDeclaringClass().getSimpleName() + "." + signature(m) + (m.isDefault()
              ? " (default)" : ""));
        }
      }
      if (!missing.isEmpty()) {
        fail(d + " does not declare " + missing.size() + " method(s); rebuild (ProxySourceGenerator"
            + " writes them at generate-sources) or add them to the hand-written class:\n  "
            + String.join("\n  ", new TreeSet<>(missing)));
      }
    }));
  }

  @Test
  void mayInheritListsOnlyRealMethods() {
    for (Delegate d : DELEGATES) {
      Set<String> signatures =
          Arrays.stream(d.iface().getMethods()).map(ProxyCompletenessTest::signature)
          .collect(Collectors.toSet());
      for (String s : d.mayInherit()) {
        assertTrue(signatures.contains(s), d + ": mayInherit names an unknown method " + s);
      }
    }
  }

  /** The class's own or a superclass's (below Object) non-abstract declaration of {@code m}. */
  static Method implementation(Class<?> type, Method m) {
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      try {
        Method found = c.getDeclaredMethod(m.getName(), m.getParameterTypes());
        return Modifier.isAbstract(found.getModifiers()) ? null : found;
      } catch (NoSuchMethodException e) {
        // look further up
      }
    }
    return null;
  }

  /**
   * What {@link ParameterLog} must record: every {@link PreparedStatement} parameter setter
   * (first parameter {@code int}), every {@link CallableStatement} setter by name (first
   * parameter {@code String}) and every {@code registerOutParameter} overload.
   */
  static List<Method> recordedCalls() {
    List<Method> out = new ArrayList<>();
    for (Method m : PreparedStatement.class.getMethods()) {
      Class<?>[] p = m.getParameterTypes();
      if (isParameterSetter(m) && p[0] == int.class) {
        out.add(m);
      }
    }
    for (Method m : CallableStatement.class.getMethods()) {
      Class<?>[] p = m.getParameterTypes();
      if ((isParameterSetter(m) && p[0] == String.class)
          || m.getName().equals("registerOutParameter")) {
        out.add(m);
      }
    }
    out.sort(ProxySourceGenerator.METHOD_ORDER);
    return out;
  }

  private static boolean isParameterSetter(Method m) {
    return !Modifier.isStatic(m.getModifiers()) && m.getName().startsWith("set")
        && !STATEMENT_SETTERS.contains(m.getName()) && m.getParameterCount() > 0;
  }

  @TestFactory
  Stream<DynamicTest> parameterLogRecordsEverySetter() {
    return recordedCalls().stream().map(m -> dynamicTest(signature(m), () -> {
      Method own;
      try {
        own = ParameterLog.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
      } catch (NoSuchMethodException e) {
        throw new AssertionError("ParameterLog has no " + signature(m)
            + "; rebuild: ProxySourceGenerator writes it at generate-sources", e);
      }
      assertEquals(void.class, own.getReturnType(), signature(m));
      assertFalse(Modifier.isStatic(own.getModifiers()), signature(m));
      assertEquals(0, own.getExceptionTypes().length, signature(m)
          + " must only record, never throw");
    }));
  }

  @Test
  void parameterLogCoversTheKnownShapes() {
    List<Method> calls = recordedCalls();
    assertEquals(12, calls.stream().filter(m
        -> m.getName().equals("registerOutParameter")).count());
    assertTrue(calls.stream().anyMatch(m
        -> signature(m).equals("setObject(int,java.lang.Object,java.sql.SQLType,int)")));
    assertTrue(calls.stream().anyMatch(m
        -> signature(m).equals("setNull(java.lang.String,int,java.lang.String)")));
    assertTrue(calls.stream().noneMatch(m -> STATEMENT_SETTERS.contains(m.getName())));
  }

  @Test
  void parameterLogHasNoStaleRecorders() {
    Set<String> expected =
        recordedCalls().stream().map(ProxyCompletenessTest::signature).collect(Collectors.toSet());
    for (Method own : ParameterLog.class.getDeclaredMethods()) {
      boolean recorder = (own.getName().startsWith("set")
          || own.getName().equals("registerOutParameter"))
          && !Modifier.isPrivate(own.getModifiers()) && !Modifier.isStatic(own.getModifiers());
      if (recorder) {
        assertTrue(expected.contains(signature(own)), "ParameterLog." + signature(own)
            + " records no JDBC call");
      }
    }
  }

  @Test
  void generatedClassesAreFinalAndPackagePrivateOverAHandWrittenAbstractClass() {
    for (Class<?> c : GENERATED) {
      assertTrue(Modifier.isFinal(c.getModifiers()), c + " is not final");
      assertFalse(Modifier.isPublic(c.getModifiers()), c + " is public");
      assertTrue(Modifier.isAbstract(c.getSuperclass().getModifiers()),
          c + ": superclass not abstract");
    }
  }

  private static Path moduleDir(String relative) {
    return Stream.of(Path.of(relative), Path.of("driver", relative))
        .filter(Files::isDirectory).findFirst().orElse(null);
  }

  /**
   * The sources the build compiled hold exactly what the generator writes with this JDK: every
   * file up to date, none missing, none extra (the build writes them at generate-sources).
   */
  @Test
  void generatedSourcesAreWhatTheGeneratorWrites() throws IOException {
    Path dir = moduleDir(ProxySourceGenerator.OUTPUT);
    Assumptions.assumeTrue(dir != null, "no generated sources from "
        + Path.of("").toAbsolutePath() + ": run the build's generate-sources phase");
    Map<String, String> expected = ProxySourceGenerator.generateAll();
    List<String> stale = new ArrayList<>();
    for (Map.Entry<String, String> e : expected.entrySet()) {
      Path file = dir.resolve(e.getKey());
      String built = Files.exists(file)
          ? Files.readString(file, StandardCharsets.UTF_8).replace("\r\n", "\n") : "";
      if (!built.equals(e.getValue())) {
        stale.add(e.getKey());
      }
    }
    try (Stream<Path> files = Files.list(dir)) {
      files.map(f -> f.getFileName().toString()).filter(n -> !expected.containsKey(n))
          .forEach(n -> stale.add(n + " (not generated)"));
    }
    assertTrue(stale.isEmpty(), "generated sources differ from ProxySourceGenerator's output: "
        + stale + "; the build's JDK and the tests' JDK differ, or generate-sources did not run");
  }

  /** Nothing generated is committed: no generated source root beside src/main and src/test. */
  @Test
  void noGeneratedSourceIsCommitted() throws IOException {
    Path src = moduleDir("src/main/java");
    Assumptions.assumeTrue(src != null, "sources not found from " + Path.of("").toAbsolutePath());
    Path module = src.getParent().getParent();
    assertFalse(Files.exists(module.resolve("src/generated")),
        "src/generated is back: the build generates these sources into "
        + ProxySourceGenerator.OUTPUT + "; edit ProxySourceGenerator instead");
    for (Class<?> c : GENERATED) {
      Path file = src.resolve(c.getName().replace('.', '/') + ".java");
      assertFalse(Files.exists(file), file + " is generated at build time; delete it");
    }
  }

  /** Hand-written sources hold no generated sections, and no generated class lives among them. */
  @Test
  void handWrittenSourcesHoldNoGeneratedCode() throws IOException {
    Path dir = moduleDir("src/main/java/dev/omnium/jdbc");
    Assumptions.assumeTrue(dir != null, "sources not found from " + Path.of("").toAbsolutePath());
    List<String> offenders = new ArrayList<>();
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
        // the note every generated file starts with (JDBC's RETURN_GENERATED_KEYS is no match)
        if (Files.readString(f, StandardCharsets.UTF_8).contains("// GENERATED by ")) {
          offenders.add(dir.relativize(f).toString());
        }
      }
    }
    assertTrue(offenders.isEmpty(), "generated code in hand-written sources: " + offenders);
  }

  static String signature(Method m) {
    return ProxySourceGenerator.signature(m);
  }
}
