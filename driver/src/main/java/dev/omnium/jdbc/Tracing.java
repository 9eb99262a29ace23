package dev.omnium.jdbc;

import static java.lang.invoke.MethodType.methodType;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Locale;
import org.postgresql.core.BaseConnection;
import org.postgresql.util.HostSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What OpenTelemetry sees of omnium (docs/observability.md). Nothing of OpenTelemetry is linked:
 * when the class initialises it looks, once, for the OpenTelemetry Java agent's bootstrap classes
 * (its relocated API and {@code CallDepth}, which the agent puts on the boot class path), else for
 * the application's own OpenTelemetry API next to the driver. Without either, {@link #ON} is false
 * and every call site is one constant test; nothing is looked up per statement either way.
 *
 * <ul>
 *   <li>{@link #statement}: inside an execute call, where the agent's (or the library
 *       instrumentation's) JDBC span of the application's statement is current, that span gets the
 *       server the statement runs on ({@code server.address}, {@code server.port}), the database
 *       ({@code db.system.name}/{@code db.system}, {@code db.namespace}/{@code db.name}) and
 *       {@code omnium.route}: the agent derives them from the URL, once per connection, which says
 *       neither {@code postgresql} nor which server a routed statement reached. Only a recording
 *       CLIENT span of the JDBC instrumentation is touched, never an enclosing one.
 *   <li>{@link #retried}: an {@code omnium.retry} event on that span.
 *   <li>{@link #quietThread()}, {@link #quietBegin()}: omnium's own sessions (lag watchers, WAL
 *       sampler, heartbeat writer, its pools' threads, {@code check}, resets on return, the replay
 *       of SQL settings) run their statements as the agent runs a statement nested in another:
 *       without a span. The agent counts that nesting per thread in
 *       {@code CallDepth.forClass(Statement.class)}.
 * </ul>
 */
final class Tracing {
  private static final Logger log = LoggerFactory.getLogger(Tracing.class);

  /** The agent relocates its API under this prefix, on the boot class path. */
  static final String AGENT_API = "io.opentelemetry.javaagent.shaded.io.opentelemetry.";
  static final String AGENT_CALL_DEPTH = "io.opentelemetry.javaagent.bootstrap.CallDepth";
  static final String APP_API = "io.opentelemetry.";
  /** The instrumentation scope of the JDBC spans, agent and library alike. */
  static final String JDBC_SCOPE = "io.opentelemetry.jdbc";
  /** {@code -Domnium.otel=off} leaves OpenTelemetry alone (nothing is looked up). */
  static final String SWITCH = "omnium.otel";

  /** An OpenTelemetry API was found: spans are decorated. */
  static final boolean ON;
  /** The agent's {@code CallDepth} was found: omnium's own statements can be left without span. */
  static final boolean QUIET;
  /** Where the API was found, for the log and for tests: "agent", "application" or "none". */
  static final String SOURCE;

  private static final MethodHandle CURRENT;      // () Object
  private static final MethodHandle IS_RECORDING; // (Object) boolean
  /** {@code setAttribute(AttributeKey, Object)}: keys made once, not one per call and name. */
  private static final MethodHandle SET;          // (Object, Object, Object) void
  private static final MethodHandle ADD_EVENT;    // (Object, String, Object) void
  private static final MethodHandle ATTRIBUTES;   // (Object x 6) Object: three keys and values
  private static final Object KEY_REASON;
  private static final Object KEY_SQLSTATE;
  private static final Object KEY_FROM;
  private static final Object KEY_NAMESPACE;
  private static final Object KEY_SYSTEM_NAME;
  private static final Object KEY_SYSTEM;
  private static final Object KEY_NAME;
  private static final Object KEY_ADDRESS;
  private static final Object KEY_PORT;
  private static final Object KEY_ROUTE;
  private static final Class<?> KEY_TYPE;
  private static final Object CLIENT;
  private static final MethodHandle DEPTH;        // () Object: CallDepth.forClass(Statement.class)
  private static final MethodHandle INCREMENT;    // (Object) int
  private static final MethodHandle DECREMENT;    // (Object) int

  private static final String[] ROUTES = new String[Route.values().length];

  static {
    for (Route r : Route.values()) ROUTES[r.ordinal()] = r.name().toLowerCase(Locale.ROOT);
    MethodHandle current = null, recording = null, set = null,
        addEvent = null, attributes = null, depth = null, inc = null, dec = null;
    Object reason = null, sqlState = null, from = null, namespace = null, client = null;
    Object systemName = null, system = null, name = null, address = null, port = null,
        omniumRoute = null;
    Class<?> keyType = null;
    String source = "none";
    if (!"off".equalsIgnoreCase(System.getProperty(SWITCH))) {
      ClassLoader app = Tracing.class.getClassLoader();
      for (int i = 0; i < 2 && current == null; i++) {
        boolean agent = i == 0;
        String prefix = agent ? AGENT_API : APP_API;
        ClassLoader loader = agent ? null : app;
        try {
          Class<?> span = Class.forName(prefix + "api.trace.Span", false, loader);
          Class<?> kind = Class.forName(prefix + "api.trace.SpanKind", false, loader);
          Class<?> attrs = Class.forName(prefix + "api.common.Attributes", false, loader);
          Class<?> key = Class.forName(prefix + "api.common.AttributeKey", false, loader);
          MethodHandles.Lookup l = MethodHandles.publicLookup();
          current = l.findStatic(span, "current", methodType(span))
              .asType(methodType(Object.class));
          recording = l.findVirtual(span, "isRecording", methodType(boolean.class))
              .asType(methodType(boolean.class, Object.class));
          set = l.findVirtual(span, "setAttribute", methodType(span, key, Object.class))
              .asType(methodType(void.class, Object.class, Object.class, Object.class));
          addEvent = l.findVirtual(span, "addEvent", methodType(span, String.class, attrs))
              .asType(methodType(void.class, Object.class, String.class, Object.class));
          attributes = l.findStatic(attrs, "of",
                  methodType(attrs, key, Object.class, key, Object.class, key, Object.class))
              .asType(methodType(Object.class, Object.class, Object.class, Object.class,
                  Object.class, Object.class, Object.class));
          MethodHandle stringKey = l.findStatic(key, "stringKey", methodType(key, String.class))
              .asType(methodType(Object.class, String.class));
          reason = stringKey.invoke("omnium.retry.reason");
          sqlState = stringKey.invoke("omnium.retry.sqlstate");
          from = stringKey.invoke("omnium.retry.from");
          namespace = stringKey.invoke("db.namespace");
          systemName = stringKey.invoke("db.system.name");
          system = stringKey.invoke("db.system");
          name = stringKey.invoke("db.name");
          address = stringKey.invoke("server.address");
          port = l.findStatic(key, "longKey", methodType(key, String.class)).invoke("server.port");
          omniumRoute = stringKey.invoke("omnium.route");
          keyType = key;
          client = kind.getField("CLIENT").get(null);
          source = agent ? "agent" : "application";
          if (agent) {
            try {
              Class<?> callDepth = Class.forName(AGENT_CALL_DEPTH, false, null);
              MethodHandle forClass = l.findStatic(callDepth, "forClass",
                  methodType(callDepth, Class.class));
              inc = l.findVirtual(callDepth, "getAndIncrement", methodType(int.class))
                  .asType(methodType(int.class, Object.class));
              dec = l.findVirtual(callDepth, "decrementAndGet", methodType(int.class))
                  .asType(methodType(int.class, Object.class));
              depth = MethodHandles.insertArguments(forClass, 0, Statement.class)
                  .asType(methodType(Object.class));
            } catch (ReflectiveOperationException | LinkageError e) {
              log.debug("the agent's CallDepth is not usable: {}", e.toString());
            }
          }
        } catch (Throwable t) {
          // not there (the usual case), or not the API we know: leave it alone
          current = null;
          source = "none";
          if (!(t instanceof ClassNotFoundException)) {
            log.debug("OpenTelemetry API under {} not usable: {}", prefix, t.toString());
          }
        }
      }
    }
    ON = current != null;
    QUIET = depth != null;
    SOURCE = source;
    CURRENT = current;
    IS_RECORDING = recording;
    SET = set;
    ADD_EVENT = addEvent;
    ATTRIBUTES = attributes;
    KEY_REASON = reason;
    KEY_SQLSTATE = sqlState;
    KEY_FROM = from;
    KEY_NAMESPACE = namespace;
    KEY_SYSTEM_NAME = systemName;
    KEY_SYSTEM = system;
    KEY_NAME = name;
    KEY_ADDRESS = address;
    KEY_PORT = port;
    KEY_ROUTE = omniumRoute;
    KEY_TYPE = keyType;
    CLIENT = client;
    DEPTH = depth;
    INCREMENT = inc;
    DECREMENT = dec;
    if (ON) {
      log.info("OpenTelemetry found ({}): JDBC spans show the server each statement ran on{}",
          SOURCE,
          QUIET ? "; omnium's own sessions make no spans" : "");
    }
  }

  private Tracing() { }

  // ---------------------------------------------------------------- application statements

  /**
   * A statement of the application is about to run on {@code b}'s session: its JDBC span, if it
   * has one, says where. Never throws.
   */
  static void statement(Binding b) {
    try {
      Object span = jdbcSpan();
      if (span == null) return;
      Route route = b.route();
      HostSpec host = null;
      String database = null;
      if (b.session() instanceof BaseConnection pg) {
        host = pg.getQueryExecutor().getHostSpec();
        database = pg.getQueryExecutor().getDatabase();
      }
      SET.invokeExact(span, KEY_SYSTEM_NAME, (Object) "postgresql");
      SET.invokeExact(span, KEY_SYSTEM, (Object) "postgresql");
      if (database != null) {
        // the agent's own namespace, when it has one for this database ("db|schema" in newer
        // versions, from pgjdbc's URL), stays: it is what plain pgjdbc's spans say
        SpanShape sh = shape;
        if (!names(sh.type == span.getClass() ? sh.namespace(span) : null, database)) {
          SET.invokeExact(span, KEY_NAMESPACE, (Object) database);
        }
        SET.invokeExact(span, KEY_NAME, (Object) database);
      }
      if (host != null) {
        SET.invokeExact(span, KEY_ADDRESS, (Object) host.getHost());
        SET.invokeExact(span, KEY_PORT, (Object) port(host.getPort()));
      }
      if (route != null) SET.invokeExact(span, KEY_ROUTE, (Object) ROUTES[route.ordinal()]);
    } catch (Throwable t) {
      failed(t);
    }
  }

  /**
   * The statement failed on {@code from} ({@link #where}) and runs once more on {@code to}: an
   * {@code omnium.retry} event on its span, whose attributes now say {@code to}. Never throws.
   */
  static void retried(String from, SQLException cause, Binding to) {
    statement(to);
    try {
      Object span = jdbcSpan();
      if (span == null) return;
      String state = cause.getSQLState();
      String reason = SqlStates.connectionDead(cause) ? "session lost" : "recovery conflict";
      Object attributes = (Object) ATTRIBUTES.invokeExact(KEY_REASON, (Object) reason,
          KEY_SQLSTATE, (Object) (state == null ? "" : state), KEY_FROM, (Object) from);
      ADD_EVENT.invokeExact(span, "omnium.retry", attributes);
    } catch (Throwable t) {
      failed(t);
    }
  }

  /** {@code route@host:port} of a binding, for {@link #retried}; only called when {@link #ON}. */
  static String where(Binding b) {
    if (b == null) return "";
    Route r = b.route();
    String s = r == null ? "" : ROUTES[r.ordinal()];
    if (b.session() instanceof BaseConnection pg) {
      HostSpec h = pg.getQueryExecutor().getHostSpec();
      s = s + "@" + h.getHost() + ":" + h.getPort();
    }
    return s;
  }

  /** Ports boxed once each (a span keeps the object): a few servers, direct-mapped. */
  private static final Long[] PORTS = new Long[16];

  /** {@code port} as a {@code Long} from {@link #PORTS}; a race only boxes once more. */
  static Long port(int port) {
    Long[] ports = PORTS;
    int i = port & (ports.length - 1);
    Long boxed = ports[i];
    if (boxed == null || boxed != port) {
      boxed = (long) port;
      ports[i] = boxed;
    }
    return boxed;
  }

  /** Whether {@code namespace} is {@code database}, or {@code database|schema}. */
  static boolean names(Object namespace, String database) {
    return namespace instanceof String s && s.startsWith(database)
        && (s.length() == database.length() || s.charAt(database.length()) == '|');
  }

  /** The current span if it is a recording JDBC CLIENT span (shape in {@link #shape}), or null. */
  private static Object jdbcSpan() throws Throwable {
    Object span = (Object) CURRENT.invokeExact();
    if (span == null || !(boolean) IS_RECORDING.invokeExact(span)) return null;
    SpanShape s = shape;
    if (s == null || s.type != span.getClass()) {
      s = SpanShape.of(span.getClass());
      shape = s;
    }
    return s.isJdbcClient(span) ? span : null;
  }

  private static volatile SpanShape shape;

  /**
   * How to read the kind and instrumentation scope of one span class: the SDK's
   * {@code ReadableSpan}, found among the span's interfaces (the API has no getter). A span class
   * without it is never decorated.
   */
  private static final class SpanShape {
    final Class<?> type;
    final MethodHandle kind;  // (Object) Object
    final MethodHandle scope; // (Object) Object: the scope's name
    final MethodHandle attribute; // (Object, Object) Object

    private SpanShape(Class<?> type, MethodHandle kind, MethodHandle scope,
        MethodHandle attribute) {
      this.type = type;
      this.kind = kind;
      this.scope = scope;
      this.attribute = attribute;
    }

    /** The span's {@code db.namespace} so far, or null. */
    Object namespace(Object span) throws Throwable {
      return attribute == null ? null : (Object) attribute.invokeExact(span, KEY_NAMESPACE);
    }

    static SpanShape of(Class<?> type) {
      try {
        Class<?> readable = readableSpan(type);
        if (readable != null) {
          MethodHandles.Lookup l = MethodHandles.publicLookup();
          MethodHandle kind = l.findVirtual(readable, "getKind", methodType(CLIENT.getClass()))
              .asType(methodType(Object.class, Object.class));
          MethodHandle info = l.findVirtual(readable, "getInstrumentationScopeInfo",
              methodType(Class.forName("io.opentelemetry.sdk.common.InstrumentationScopeInfo",
                  false, readable.getClassLoader())));
          MethodHandle name = l.findVirtual(info.type().returnType(), "getName",
              methodType(String.class));
          MethodHandle attribute = l.findVirtual(readable, "getAttribute",
                  methodType(Object.class, KEY_TYPE))
              .asType(methodType(Object.class, Object.class, Object.class));
          return new SpanShape(type, kind,
              MethodHandles.filterReturnValue(info, name)
                  .asType(methodType(Object.class, Object.class)),
              attribute);
        }
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        log.debug("cannot read the kind of {} spans: {}", type.getName(), e.toString());
      }
      return new SpanShape(type, null, null, null);
    }

    boolean isJdbcClient(Object span) throws Throwable {
      return kind != null && (Object) kind.invokeExact(span) == CLIENT
          && JDBC_SCOPE.equals((Object) scope.invokeExact(span));
    }

    private static Class<?> readableSpan(Class<?> type) {
      ArrayDeque<Class<?>> todo = new ArrayDeque<>();
      for (Class<?> c = type; c != null; c = c.getSuperclass()) todo.add(c);
      while (!todo.isEmpty()) {
        Class<?> c = todo.poll();
        if (c.getName().equals("io.opentelemetry.sdk.trace.ReadableSpan")) return c;
        for (Class<?> i : c.getInterfaces()) todo.add(i);
      }
      return null;
    }
  }

  // ---------------------------------------------------------------- omnium's own statements

  /**
   * The current thread is one of omnium's own (a lag watcher, the WAL sampler, the heartbeat
   * writer, an internal pool's thread, {@code check}): no statement it runs gets a span.
   * Idempotent.
   */
  static void quietThread() {
    if (!QUIET) return;
    try {
      Object d = (Object) DEPTH.invokeExact();
      if ((int) INCREMENT.invokeExact(d) > 0) {
        int ignored = (int) DECREMENT.invokeExact(d); // quiet already
      }
    } catch (Throwable t) {
      failed(t);
    }
  }

  /**
   * Called by an internal pool's connector: on the pool's connection adder (HikariCP opens sessions
   * only there, and validates the first one there) that thread is omnium's own for good. Any other
   * thread is left as it is.
   */
  static void quietPoolAdder() {
    if (QUIET && Thread.currentThread().getName().endsWith(":connection-adder")) quietThread();
  }

  /**
   * Until {@link #quietEnd}, statements of this thread get no span (omnium's own work on an
   * application thread: a reset on return, a connect). Returns what quietEnd needs, or null.
   */
  static Object quietBegin() {
    if (!QUIET) return null;
    try {
      Object d = (Object) DEPTH.invokeExact();
      int ignored = (int) INCREMENT.invokeExact(d);
      return d;
    } catch (Throwable t) {
      failed(t);
      return null;
    }
  }

  static void quietEnd(Object depth) {
    if (depth == null) return;
    try {
      int ignored = (int) DECREMENT.invokeExact(depth);
    } catch (Throwable t) {
      failed(t);
    }
  }

  /** Whether statements of this thread get no span now (for tests). */
  static boolean quiet() {
    if (!QUIET) return false;
    try {
      Object d = (Object) DEPTH.invokeExact();
      int was = (int) INCREMENT.invokeExact(d);
      int ignored = (int) DECREMENT.invokeExact(d);
      return was > 0;
    } catch (Throwable t) {
      return false;
    }
  }

  private static volatile boolean failedOnce;

  /** An API that changed under us: one line, then the statement runs as if nothing happened. */
  private static void failed(Throwable t) {
    if (!failedOnce) {
      failedOnce = true;
      log.warn("OpenTelemetry ({}) did not take omnium's span attributes: {}", SOURCE,
          t.toString());
    }
  }
}
