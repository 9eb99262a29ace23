package dev.omnium.jdbc;

import dev.omnium.bench.BenchCluster;
import dev.omnium.bench.SuiteSettings;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What omnium's span decoration ({@link Tracing#statement}, docs/observability.md) costs one
 * statement, without the noise of a whole transaction: a recording JDBC CLIENT span of the
 * OpenTelemetry SDK, with the attributes the agent's JDBC instrumentation gives a statement, made
 * current as the agent makes it around an application's statement and ended after it;
 * {@code decorated} also runs {@code Tracing.statement} on a binding of a real replica session
 * (pgjdbc, the sandbox's replica), as a routed statement does. The difference is the decoration.
 *
 * <p>The SDK is on the fork's boot class path (benchmarks/target/otel-sdk, copied there by the
 * build; the fork runs from the repository's root): {@code Tracing} finds it as an application's
 * OpenTelemetry API. The other benchmarks' forks lack it, so tracing stays off there, as for an
 * application without OpenTelemetry; run.sh leaves this one to otel.sh.
 */
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsPrepend = {"-Xbootclasspath/a:"
    + "benchmarks/target/otel-sdk/opentelemetry-api.jar:"
    + "benchmarks/target/otel-sdk/opentelemetry-context.jar:"
    + "benchmarks/target/otel-sdk/opentelemetry-common.jar:"
    + "benchmarks/target/otel-sdk/opentelemetry-sdk-common.jar:"
    + "benchmarks/target/otel-sdk/opentelemetry-sdk-trace.jar"},
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
public class TracingBenchmark extends SuiteSettings {
  private static final String SQL = "SELECT v, payload FROM bench_read WHERE id = ?";

  private BenchCluster cluster;
  private Connection session;
  private Binding binding;
  private Tracer tracer;
  /** What the agent's JDBC instrumentation puts on a statement's span (database/dup semconv). */
  private Attributes agentAttributes;

  @Setup(Level.Trial)
  public void start() throws SQLException {
    if (!Tracing.ON) {
      throw new IllegalStateException("no OpenTelemetry API on the boot class path: build the"
          + " benchmarks module (it copies the SDK to benchmarks/target/otel-sdk) and run JMH from"
          + " the repository's root");
    }
    cluster = BenchCluster.start();
    Properties p = new Properties();
    p.setProperty("user", cluster.user());
    session = DriverManager.getConnection("jdbc:postgresql://" + cluster.replica().hostPort() + "/"
        + cluster.database(), p);
    binding = new Binding(null, null, false);
    binding.bind(session, Route.REPLICA, null);
    tracer = SdkTracerProvider.builder().build().get(Tracing.JDBC_SCOPE);
    agentAttributes = Attributes.builder()
        .put("db.system", "other_sql").put("db.system.name", "other_sql")
        .put("db.name", cluster.database()).put("db.namespace", cluster.database())
        .put("db.statement", SQL).put("db.query.text", SQL)
        .put("db.operation", "SELECT").put("db.operation.name", "SELECT")
        .put("db.sql.table", "bench_read").put("db.collection.name", "bench_read")
        .put("db.connection_string", "other_sql:").put("db.user", cluster.user())
        .put(AttributeKey.stringKey("server.address"), "localhost")
        .build();
    // Fails the trial, not a measurement, if the decoration does not reach the span.
    Span s = jdbcSpan();
    try (Scope ignored = s.makeCurrent()) {
      Tracing.statement(binding);
    } finally {
      s.end();
    }
    Object route = ((io.opentelemetry.sdk.trace.ReadableSpan) s)
        .getAttribute(AttributeKey.stringKey("omnium.route"));
    if (!"replica".equals(route)) throw new IllegalStateException("span not decorated: " + route);
  }

  @TearDown(Level.Trial)
  public void stop() throws SQLException {
    if (session != null) session.close();
    if (cluster != null) cluster.close();
  }

  private Span jdbcSpan() {
    return tracer.spanBuilder("SELECT bench_read").setSpanKind(SpanKind.CLIENT)
        .setAllAttributes(agentAttributes).startSpan();
  }

  /** The agent's span of one statement alone: what plain pgjdbc's statements pay too. */
  @Benchmark
  public Span span() {
    Span s = jdbcSpan();
    try (Scope ignored = s.makeCurrent()) {
      return s;
    } finally {
      s.end();
    }
  }

  /** The same span with omnium's decoration: server, database, route. */
  @Benchmark
  public Span decorated() {
    Span s = jdbcSpan();
    try (Scope ignored = s.makeCurrent()) {
      Tracing.statement(binding);
      return s;
    } finally {
      s.end();
    }
  }
}
