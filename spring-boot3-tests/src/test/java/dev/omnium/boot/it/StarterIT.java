package dev.omnium.boot.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Sessions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The starter in a real Spring Boot web application (this suite runs on Boot 3.5 and on Boot 4.0)
 * against a primary + streaming replica: only {@code spring.datasource.url} and {@code omnium.*}
 * properties, health and metrics read over HTTP, routing asserted on the servers.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StarterIT {
  static final String APP = "starterapp";
  static final Duration DEADLINE = Duration.ofSeconds(30);
  /**
   * Passwords required (so spring.datasource.password must reach every session); the driver
   * itself writes the heartbeat (omnium.heartbeat-writer=true).
   */
  @RegisterExtension
  static final PgSandbox SANDBOX =
      PgSandbox.builder().replicas(1).requirePasswords().heartbeatTableOnly().build();
  static PgCluster cluster;
  static ConfigurableApplicationContext context;
  static HttpClient http;
  static String base;

  @BeforeAll
  static void up() throws Exception {
    cluster = SANDBOX.cluster();
    List<String> props = new ArrayList<>(List.of(
        "spring.main.banner-mode=off",
        // Flyway is on this suite's class path for FlywayGuardStarterIT; this application has no
        // migrations (and the heartbeat table makes public non-empty, which Flyway refuses)
        "spring.flyway.enabled=false",
        // Only the URL: no driver-class-name. maxAge in the URL wins over omnium.max-age below.
        "spring.datasource.url=" + cluster.omniumUrl() + "&maxAge=2s",
        "spring.datasource.username=" + cluster.user(),
        "spring.datasource.hikari.maximum-pool-size=4",
        "spring.datasource.hikari.connection-timeout=5000",
        // omnium.* in the spellings relaxed binding accepts
        "omnium.max-age=30s",
        "omnium.application-name=" + APP,
        "omnium.heartbeat-writer=true",
        "omnium.heartbeatInterval=200ms",
        "omnium.replica-statement-timeout=3s",
        "server.port=0",
        "management.endpoints.web.exposure.include=health,metrics,prometheus",
        "management.endpoint.health.show-details=always",
        "management.endpoint.health.show-components=always",
        "management.endpoint.health.probes.enabled=true",
        "management.endpoint.health.group.readiness.include=readinessState,omnium"));
    props.add("spring.datasource.password=" + cluster.password());
    context = new SpringApplicationBuilder(StarterApp.class)
          .properties(props.toArray(new String[0]))
          // an environment variable, as a container would set it: OMNIUM_LOCK_TIMEOUT
        .initializers(ctx -> ctx.getEnvironment().getPropertySources().addFirst(
            new SystemEnvironmentPropertySource("test-systemEnvironment",
                Map.of("OMNIUM_LOCKTIMEOUT", "7s"))))
        .run();
    base = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
    http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    System.out.printf("Spring Boot %s on PostgreSQL %s at %s%n", SpringBootVersion.getVersion(),
        cluster.version(), base);
    SANDBOX.awaitCaughtUp();
    poll("read-only requests to reach the replica", () -> isTrue(read().get("in_recovery")));
  }

  /** Before the sandbox stops its servers (and shuts the driver down). */
  @AfterAll
  static void down() {
    if (context != null) {
      context.close();
    }
  }

  // ---------------------------------------------------------------- drop-in and routing

  @Test
  @Order(1)
  void bootBuildsItsOwnHikariPoolOverTheDriverWithoutADriverClassName() throws Exception {
    DataSource ds = context.getBean(DataSource.class);
    HikariDataSource hikari = assertInstanceOfHikari(ds);
    assertEquals(OmniumDriver.class.getName(), hikari.getDriverClassName());
    assertTrue(hikari.getJdbcUrl().startsWith("jdbc:omnium:postgresql://"), hikari.getJdbcUrl());
    assertEquals(cluster.user(), write().get("usr"),
        "spring.datasource.username reached the server");
  }

  @Test
  @Order(2)
  void readOnlyTransactionsRunOnTheReplicaAndWritesOnThePrimary() throws Exception {
    Map<String, Object> r = read();
    assertTrue(isTrue(r.get("in_recovery")), "the session that answered is in recovery: " + r);
    assertEquals(cluster.replica(0).port(), ((Number) r.get("port")).intValue());
    assertEquals(APP + ":replica", r.get("app"), "omnium.application-name reached the driver");

    Map<String, Object> w = write();
    assertEquals(Boolean.FALSE, w.get("in_recovery"), "the write ran on the primary: " + w);
    assertEquals(cluster.primary().port(), ((Number) w.get("port")).intValue());
    assertEquals(APP, w.get("app"));
    assertEquals("1", SANDBOX.queryOne(cluster.primary(), "SELECT least(count(*), 1) FROM visits"),
        "the row is on the primary");
  }

  @Test
  @Order(3)
  void omniumPropertiesReachTheSessionsAndTheUrlWins() throws Exception {
    assertEquals("3s", read().get("statement_timeout"), "omnium.replica-statement-timeout");
    assertEquals("7s", write().get("lock_timeout"), "OMNIUM_LOCKTIMEOUT (environment variable)");
    Map<String, Object> d = details(health("/actuator/health/omnium"));
    assertEquals(2000L, ((Number) d.get("maxAgeMillis")).longValue(),
        "maxAge=2s in the URL wins over omnium.max-age=30s");
    // omnium.heartbeat-writer=true: this process writes the heartbeat, as the primary sees it
    poll("the heartbeat writer session on the primary",
        () -> Sessions.count(cluster, cluster.primary(), APP + ":heartbeat") == 1);
    poll("health to report this process as the heartbeat writer",
        () -> isTrue(details(health("/actuator/health/omnium")).get("heartbeatWriter")));
  }

  // ---------------------------------------------------------------- health

  @Test
  @Order(4)
  void healthIsUpWithReplicaFallbackAndAlertDetails() throws Exception {
    HttpResponse<String> res = get("/actuator/health/omnium");
    assertEquals(200, res.statusCode(), res.body());
    Map<String, Object> h = json(res.body());
    assertEquals("UP", h.get("status"));
    Map<String, Object> d = details(h);
    assertEquals(APP, d.get("router"));
    assertEquals("reachable", d.get("primary"));
    Map<String, Object> replica = replicaDetails(d);
    assertEquals(Boolean.TRUE, replica.get("fresh"), d.toString());
    assertNotNull(replica.get("state"));
    assertTrue(((Number) replica.get("lagMillis")).longValue() <= 2000, replica.toString());
    Map<String, Object> fallback = map(d.get("fallback"));
    assertEquals(4, ((Number) fallback.get("max")).intValue());
    assertEquals(Boolean.FALSE, d.get("lagAlert"));

    // the documented readiness group carries the component
    HttpResponse<String> ready = get("/actuator/health/readiness");
    assertEquals(200, ready.statusCode(), ready.body());
    assertEquals("UP", map(map(json(ready.body()).get("components")).get("omnium")).get("status"));
    // and the overall health lists it
    assertTrue(map(json(get("/actuator/health").body()).get("components")).containsKey("omnium"));
  }

  @Test
  @Order(5)
  void staleReplicaIsADetailTheComponentStaysUpAndReadsTakeTheFallback() throws Exception {
    cluster.pauseReplay(cluster.replica(0));
    try {
      poll("health to show the paused replica as not fresh",
          () -> isFalse(replicaDetails(details(health("/actuator/health/omnium"))).get("fresh")));
      HttpResponse<String> res = get("/actuator/health/omnium");
      assertEquals(200, res.statusCode(),
          "a stale replica does not make the component DOWN: " + res.body());
      assertEquals("UP", json(res.body()).get("status"));
      Map<String, Object> r = read();
      assertEquals(Boolean.FALSE, r.get("in_recovery"), "the read left the stale replica: " + r);
      assertEquals(APP + ":fallback", r.get("app"));
      assertEquals(cluster.primary().port(), ((Number) r.get("port")).intValue());
      assertTrue(metric("omnium.routes", "route:fallback") >= 1, "the fallback route was counted");
    } finally {
      cluster.resumeReplay(cluster.replica(0));
    }
    poll("the replica to be fresh again",
        () -> isTrue(replicaDetails(details(health("/actuator/health/omnium"))).get("fresh")));
    poll("reads to return to the replica", () -> isTrue(read().get("in_recovery")));
  }

  // ---------------------------------------------------------------- metrics

  @Test
  @Order(6)
  void metricsAreServedOverHttp() throws Exception {
    double before = metric("omnium.routes", "route:replica");
    assertEquals(Boolean.TRUE, read().get("in_recovery"));
    assertTrue(metric("omnium.routes", "route:replica") >= before + 1,
        "a replica route was counted");
    write();
    assertTrue(metric("omnium.routes", "route:primary") >= 1);
    double lag = metric("omnium.replica.lag", "replica:" + cluster.replica(0).hostPort());
    assertTrue(lag >= 0 && lag <= 2, "effective lag in seconds: " + lag);
    assertEquals(4.0, metric("omnium.fallback.max", null));
    assertEquals(0.0, metric("omnium.lag.alert", null));
    assertTrue(metric("omnium.fallback.active", null) >= 0);
    assertTrue(metric("omnium.retries", null) >= 0);
    Map<String, Object> routes = json(get("/actuator/metrics/omnium.routes").body());
    assertTrue(tagValues(routes, "route").containsAll(List.of("primary", "replica", "fallback")));

    // HikariCP's own meters for the internal pools, under their pool names
    List<Object> pools =
        tagValues(json(get("/actuator/metrics/hikaricp.connections").body()), "pool");
    assertTrue(pools.stream().anyMatch(p -> p.toString().startsWith(APP + "-fallback-")),
        pools.toString());
    assertTrue(pools.stream().anyMatch(p -> p.toString().startsWith(APP + "-replica-")),
        pools.toString());
    String prometheus = get("/actuator/prometheus").body();
    assertTrue(prometheus.contains("omnium_routes_total{"), "Prometheus names");
    assertTrue(prometheus.contains("omnium_replica_lag_seconds{"), "base unit seconds");
  }

  // ---------------------------------------------------------------- last: the primary goes away

  @Test
  @Order(100)
  void unreachablePrimaryMakesTheComponentDown() throws Exception {
    cluster.stop(cluster.primary(), true);
    poll("health to turn DOWN", () -> get("/actuator/health/omnium").statusCode() == 503);
    Map<String, Object> h = json(get("/actuator/health/omnium").body());
    assertEquals("DOWN", h.get("status"));
    Map<String, Object> d = details(h);
    assertEquals("unreachable", d.get("primary"));
    String error = String.valueOf(d.get("error"));
    assertFalse(error.isEmpty());
    assertFalse(error.contains(cluster.password()), "no password in health: " + error);
    assertFalse(get("/actuator/health").body().contains(cluster.password()));
    assertNull(d.get("password"));
  }

  // ---------------------------------------------------------------- helpers

  static HikariDataSource assertInstanceOfHikari(DataSource ds) {
    assertTrue(ds instanceof HikariDataSource, ds.getClass().getName());
    return (HikariDataSource) ds;
  }

  static HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(base + path))
        .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  static Map<String, Object> read() throws Exception {
    HttpResponse<String> res = get("/read");
    assertEquals(200, res.statusCode(), res.body());
    return json(res.body());
  }

  static Map<String, Object> write() throws Exception {
    HttpResponse<String> res = http.send(HttpRequest.newBuilder(URI.create(base + "/write"))
        .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, res.statusCode(), res.body());
    return json(res.body());
  }

  static Map<String, Object> health(String path) throws Exception {
    return json(get(path).body());
  }

  static Map<String, Object> details(Map<String, Object> health) {
    return map(health.get("details"));
  }

  static Map<String, Object> replicaDetails(Map<String, Object> details) {
    return map(map(details.get("replicas")).get(cluster.replica(0).hostPort()));
  }

  /** The single measurement of a meter, optionally narrowed by one {@code tag:value}. */
  static double metric(String name, String tag) throws Exception {
    HttpResponse<String> res =
        get("/actuator/metrics/" + name + (tag == null ? "" : "?tag=" + tag));
    assertEquals(200, res.statusCode(), name + " " + tag + ": " + res.body());
    List<?> measurements = (List<?>) json(res.body()).get("measurements");
    return ((Number) map(measurements.get(0)).get("value")).doubleValue();
  }

  @SuppressWarnings("unchecked")
  static List<Object> tagValues(Map<String, Object> meter, String tag) {
    for (Object t : (List<?>) meter.get("availableTags")) {
      if (tag.equals(map(t).get("tag"))) return (List<Object>) map(t).get("values");
    }
    return List.of();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    assertTrue(o instanceof Map, "expected a JSON object: " + o);
    return (Map<String, Object>) o;
  }

  /** Boot's own JSON parser (Jackson 2 on Boot 3, Jackson 3 on Boot 4). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> json(String body) {
    return (Map<String, Object>) literals(JsonParserFactory.getJsonParser().parseMap(body));
  }

  /** Boot's fallback parser returns true, false and null as strings: type them back. */
  static Object literals(Object o) {
    if (o instanceof Map<?, ?> m) {
      Map<Object, Object> out = new LinkedHashMap<>();
      m.forEach((k, v) -> out.put(k, literals(v)));
      return out;
    }
    if (o instanceof List<?> l) return l.stream().map(StarterIT::literals).toList();
    if ("true".equals(o)) return Boolean.TRUE;
    if ("false".equals(o)) return Boolean.FALSE;
    return "null".equals(o) ? null : o;
  }

  static void poll(String what, Callable<Boolean> condition) throws Exception {
    Poll.until(DEADLINE, what, condition);
  }

  static boolean isTrue(Object o) {
    return Boolean.TRUE.equals(o);
  }

  static boolean isFalse(Object o) {
    return Boolean.FALSE.equals(o);
  }
}
