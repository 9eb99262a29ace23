package dev.omnium.oteltests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real OpenTelemetry Java agent in forked application JVMs, in every mode omnium is adopted in,
 * against plain pgjdbc as the oracle. Every application statement's span must say what the server
 * that ran it said ({@code inet_server_port()}, {@code pg_is_in_recovery()} of the same statement):
 * {@code db.system.name}/{@code db.system}, {@code db.namespace}, {@code server.address}/
 * {@code server.port}, {@code omnium.route}; one span per statement, a child of the application's
 * unit of work; an {@code omnium.retry} event on a statement retried after a lost replica session;
 * and no span from omnium's own sessions (lag watcher, WAL sampler, pools), which run every 200 ms
 * here.
 */
class OtelTracesIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      // the replica cancels a query that holds replay back for more than 100 ms: a real 40001
      .setting("max_standby_streaming_delay", "100ms").setting("max_standby_archive_delay", "100ms")
      .sql(TracedApp.SCHEMA, TracedApp.CONFLICT_SCHEMA, TracedApp.CONFLICT_DATA).build();

  static final int UNITS = 6;
  /** How long each application stays idle at the end while omnium's background work goes on. */
  static final long IDLE_MILLIS = 3000;
  static final String OMNIUM_KEYS = "heartbeatInterval=200ms&maxAge=5s";
  /** The issue's table, one row per run, printed at the end. */
  static final Map<String, String> TABLE = new TreeMap<>();
  static final String LATEST = "otel.agent.jar";
  static final String OLDER = "otel.agent.old.jar";
  /** OTLP's SPAN_KIND_SERVER. */
  static final int SERVER = 2;

  // ---------------------------------------------------------------- the oracle

  @Test
  void plainPgjdbcIsTheOracle() throws Exception {
    TracedRun run = TracedRun.run("plain", otel(LATEST), app(true, pool(plainUrl("plain-own"))), null);
    assertTruthful(run, false);
  }

  // ---------------------------------------------------------------- omnium's modes

  @Test
  void driverMode() throws Exception {
    List<String> args = withRetry(pool(SANDBOX.bareUrl("oteldrv", OMNIUM_KEYS)));
    args.add("conflict");
    TracedRun run = TracedRun.run("driver", otel(LATEST), app(true, args), () -> loseReplicaSessions("oteldrv"),
        () -> truncateWhileTheReplicaReads("oteldrv"));
    assertTruthful(run, true);
    assertRetryEvent(run);
    // the slow read the replica cancelled (40001) ran again on the fallback route: one span, one event
    TracedRun.Ran c = run.ran.get("c1");
    assertTrue(c != null && !c.inRecovery() && c.port() == SANDBOX.primary().port(), c + "\n" + run.transcript());
    ExportedSpan s = run.spansOf("c1").get(0);
    List<ExportedSpan.Event> retries = s.events().stream().filter(e -> e.name().equals("omnium.retry"))
        .collect(Collectors.toList());
    assertEquals(1, retries.size(), s.toString());
    assertEquals("recovery conflict", retries.get(0).attributes().get("omnium.retry.reason"), s.toString());
    assertEquals("40001", retries.get(0).attributes().get("omnium.retry.sqlstate"), s.toString());
    assertEquals("fallback", s.attribute("omnium.route"), s.toString());
  }

  @Test
  void dataSourceMode() throws Exception {
    TracedRun run = TracedRun.run("datasource", otel(LATEST),
        app(true, withRetry(args("datasource", SANDBOX.bareUrl("otelds", OMNIUM_KEYS)))),
        () -> loseReplicaSessions("otelds"));
    assertTruthful(run, true);
    assertRetryEvent(run);
  }

  @Test
  void javaagentModeOpenTelemetryFirst() throws Exception {
    List<String> jvm = new ArrayList<>(otel(LATEST));
    jvm.add(omniumAgent("otelagt1"));
    TracedRun run = TracedRun.run("agent-otel-first", jvm, app(true, withRetry(pool(plainUrl("agt1-own")))),
        () -> loseReplicaSessions("otelagt1"));
    assertTruthful(run, true);
    assertRetryEvent(run);
  }

  @Test
  void javaagentModeOmniumFirst() throws Exception {
    List<String> jvm = new ArrayList<>();
    jvm.add(omniumAgent("otelagt2"));
    jvm.addAll(otel(LATEST));
    TracedRun run = TracedRun.run("agent-omnium-first", jvm, app(true, pool(plainUrl("agt2-own"))), null);
    assertTruthful(run, true);
  }

  /** The common case: an application without the OpenTelemetry API, only the agent. */
  @Test
  void driverModeWithoutTheApi() throws Exception {
    TracedRun run = TracedRun.run("driver-no-api", otel(LATEST),
        app(false, pool(SANDBOX.bareUrl("otelnoapi", OMNIUM_KEYS))), null);
    assertTruthful(run, true);
  }

  /** omnium's Spring Boot starter in a web application: JDBC spans are children of the request's. */
  @Test
  void springBootStarter() throws Exception {
    int port = freePort();
    List<String> launch = List.of("-jar", TracedRun.jar("spring.app.jar"),
        "--spring.datasource.url=" + SANDBOX.bareUrl("otelboot", null),
        "--spring.datasource.username=" + SANDBOX.cluster().user(),
        "--omnium.heartbeat-interval=200ms", "--omnium.max-age=5s",
        "--server.port=" + port, "--spring.main.banner-mode=off", "--logging.level.root=WARN",
        "--idleMs=" + IDLE_MILLIS);
    TracedRun run = TracedRun.run("spring-boot", otel(LATEST), launch, () -> {
      String base = "http://127.0.0.1:" + port;
      for (int n = 1; n <= UNITS; n++) {
        get(base + "/read/" + n);
        get(base + "/read/" + (100 + n));
        get(base + "/write/" + n);
        Thread.sleep(150);
      }
    });
    assertTruthful(run, true);
    // the unit each statement's span is a child of (checked above) is the request's server span
    for (TracedRun.Unit u : run.units.values()) {
      assertTrue(run.spans.stream().anyMatch(p -> p.spanId().equals(u.spanId()) && p.kind() == SERVER),
          u + " is not a server span\n" + run.transcript());
    }
  }

  // ---------------------------------------------------------------- an older agent

  @Test
  void olderAgentDriverMode() throws Exception {
    TracedRun run = TracedRun.run("old-driver", otel(OLDER),
        app(true, withRetry(pool(SANDBOX.bareUrl("oteloldd", OMNIUM_KEYS)))), () -> loseReplicaSessions("oteloldd"));
    assertTruthful(run, true);
    assertRetryEvent(run);
  }

  @Test
  void olderAgentJavaagentModeBothOrders() throws Exception {
    List<String> first = new ArrayList<>(otel(OLDER));
    first.add(omniumAgent("oteloldA"));
    assertTruthful(TracedRun.run("old-agent-otel-first", first, app(true, pool(plainUrl("oldA-own"))), null), true);
    List<String> second = new ArrayList<>();
    second.add(omniumAgent("oteloldB"));
    second.addAll(otel(OLDER));
    assertTruthful(TracedRun.run("old-agent-omnium-first", second, app(true, pool(plainUrl("oldB-own"))), null), true);
  }

  @AfterAll
  static void printTable() {
    StringBuilder sb = new StringBuilder("[otel-tests] what the spans said\n");
    sb.append(String.format("%-24s %-22s %-26s %-14s %-14s %s%n", "run", "db.system/.name",
        "server.* of replica reads", "db.namespace", "spans/stmt", "untagged spans/s"));
    TABLE.values().forEach(sb::append);
    System.out.println(sb);
  }

  // ---------------------------------------------------------------- assertions

  /**
   * Every statement the application ran has exactly one JDBC span, which says what the server said;
   * with omnium, also its route; a child of the unit of work when the application made one; and
   * (with omnium) no JDBC span of anything else.
   */
  static void assertTruthful(TracedRun run, boolean omnium) {
    record(run);
    String host = SANDBOX.primary().host();
    String database = SANDBOX.cluster().database();
    assertTrue(run.ran.size() >= UNITS * 4, "too few statements\n" + run.transcript());
    int replicaReads = 0;
    for (TracedRun.Ran r : run.ran.values()) {
      List<ExportedSpan> spans = run.spansOf(r.tag());
      assertEquals(1, spans.size(), r + ": spans " + spans + "\n" + run.transcript());
      ExportedSpan s = spans.get(0);
      String what = r + " " + s;
      assertEquals(ExportedSpan.CLIENT, s.kind(), what);
      assertEquals("postgresql", s.attribute("db.system.name"), what);
      assertEquals("postgresql", s.attribute("db.system"), what);
      // the database, or "database|schema" as newer agents write it for plain pgjdbc
      String namespace = s.attribute("db.namespace");
      assertTrue(namespace != null && (namespace.equals(database) || namespace.startsWith(database + "|")),
          what + ": db.namespace");
      assertEquals(database, s.attribute("db.name"), what);
      assertEquals(host, s.attribute("server.address"), what);
      assertEquals(Integer.toString(r.port()), s.attribute("server.port"), what);
      if (omnium) {
        String route = r.inRecovery() ? "replica" : r.tag().startsWith("w") ? "primary" : "fallback";
        assertEquals(route, s.attribute("omnium.route"), what);
      } else {
        assertEquals(null, s.attribute("omnium.route"), what);
      }
      if (r.inRecovery()) {
        replicaReads++;
        assertEquals(SANDBOX.replica(0).port(), r.port(), what);
      }
      TracedRun.Unit unit = run.units.get(unitOf(run, r.tag()));
      if (unit != null) {
        assertEquals(unit.traceId(), s.traceId(), what + ": not in its unit's trace");
        assertEquals(unit.spanId(), s.parentSpanId(), what + ": not a child of its unit of work");
      }
    }
    if (omnium) {
      assertTrue(replicaReads >= 3, "reads on the replica: " + replicaReads + "\n" + run.transcript());
      // the last unit's reads ran on the replica: nothing the agent asked pinned them elsewhere
      for (String tag : List.of("r" + UNITS + "a", "r" + UNITS + "b", "a" + UNITS)) {
        TracedRun.Ran r = run.ran.get(tag);
        assertTrue(r == null || r.inRecovery(), tag + " not on the replica\n" + run.transcript());
      }
      List<ExportedSpan> own = run.untagged();
      assertEquals(List.of(), own.stream().map(s -> s.name() + " [" + s.queryText() + "]").collect(Collectors.toList()),
          "spans of omnium's own work\n" + run.transcript());
    }
  }

  /** The statement run after the replica's sessions were terminated: retried, and its span says so. */
  static void assertRetryEvent(TracedRun run) {
    TracedRun.Ran x = run.ran.get("x1");
    ExportedSpan s = run.spansOf("x1").get(0);
    assertTrue(!x.inRecovery() && x.port() == SANDBOX.primary().port(), x + ": not retried on the fallback");
    List<ExportedSpan.Event> retries = s.events().stream().filter(e -> e.name().equals("omnium.retry"))
        .collect(Collectors.toList());
    assertEquals(1, retries.size(), s + ": events " + s.events());
    Map<String, String> a = retries.get(0).attributes();
    assertEquals("session lost", a.get("omnium.retry.reason"), a.toString());
    assertTrue(a.get("omnium.retry.from").startsWith("replica@" + SANDBOX.replica(0).hostPort()), a.toString());
    assertEquals("fallback", s.attribute("omnium.route"));
  }

  /** The issue's table row of a run (printed at the end, also for a run that fails). */
  static void record(TracedRun run) {
    int replicaRight = 0;
    int replicaReads = 0;
    int maxPerStatement = 0;
    String system = "-";
    String namespace = "-";
    for (TracedRun.Ran r : run.ran.values()) {
      List<ExportedSpan> spans = run.spansOf(r.tag());
      maxPerStatement = Math.max(maxPerStatement, spans.size());
      if (spans.isEmpty()) continue;
      ExportedSpan s = spans.get(0);
      system = s.attribute("db.system") + "/" + s.attribute("db.system.name");
      namespace = String.valueOf(s.attribute("db.namespace"));
      if (r.inRecovery()) {
        replicaReads++;
        if (Integer.toString(r.port()).equals(s.attribute("server.port"))) replicaRight++;
      }
    }
    double perSecond = run.untagged().size() / (run.took.toMillis() / 1000.0);
    TABLE.put(run.name, String.format("%-24s %-22s %-26s %-14s %-14d %.1f (%d in %.1f s)%n", run.name, system,
        replicaRight + " of " + replicaReads, namespace, maxPerStatement, perSecond, run.untagged().size(),
        run.took.toMillis() / 1000.0));
  }

  /** The unit of work a tag belongs to: its number (0 for x1); a Spring write is unit 1000 + n. */
  static int unitOf(TracedRun run, String tag) {
    int n = tag.startsWith("x") || tag.startsWith("c") ? 0 : Integer.parseInt(tag.replaceAll("[^0-9]", ""));
    return tag.startsWith("w") && run.units.containsKey(1000 + n) ? 1000 + n : n;
  }

  static List<String> otel(String jarProperty) {
    return TracedRun.otelAgent(jarProperty);
  }

  static List<String> app(boolean withApi, List<String> args) {
    return TracedRun.tracedApp(withApi, args);
  }

  static int freePort() throws java.io.IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static void get(String url) throws Exception {
    java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), url + ": " + r.body());
  }

  // ---------------------------------------------------------------- runs

  static List<String> args(String mode, String url) {
    return new ArrayList<>(List.of(mode, url, SANDBOX.cluster().user(), Integer.toString(UNITS),
        Long.toString(IDLE_MILLIS)));
  }

  static List<String> pool(String url) {
    return args("pool", url);
  }

  static List<String> withRetry(List<String> args) {
    args.add("retry");
    return args;
  }

  static String plainUrl(String ownName) {
    return "jdbc:postgresql://" + SANDBOX.primary().hostPort() + "/" + SANDBOX.cluster().database()
        + "?ApplicationName=" + ownName;
  }

  static String omniumAgent(String applicationName) {
    return "-javaagent:" + TracedRun.jar("omnium.agent.jar") + "=replica=" + SANDBOX.replica(0).hostPort()
        + "&applicationName=" + applicationName + "&" + OMNIUM_KEYS;
  }

  /** Waits until the replica runs the application's slow read, then truncates its table on the primary. */
  static void truncateWhileTheReplicaReads(String app) throws Exception {
    Poll.until(Duration.ofSeconds(60), "the slow read to run on the replica",
        () -> !"0".equals(SANDBOX.queryOne(SANDBOX.replica(0), "SELECT count(*) FROM pg_stat_activity"
            + " WHERE application_name = ? AND query LIKE '%pg_sleep(3)%' AND state = 'active'", app + ":replica")));
    SANDBOX.execOnPrimary("TRUNCATE otel_conflict");
  }

  /** Ends every replica session of the application's pool on the server; the pool still holds them. */
  static void loseReplicaSessions(String app) throws Exception {
    String name = app + ":replica";
    SANDBOX.queryOne(SANDBOX.replica(0), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
        + " WHERE application_name = ?", name);
    Poll.until(Duration.ofSeconds(30), "the replica sessions of " + app + " are gone",
        () -> "0".equals(SANDBOX.queryOne(SANDBOX.replica(0),
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", name)));
  }
}
