package dev.omnium.it.endpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.CheckReport;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.RouterMXBean;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.micrometer.OmniumMetrics;
import dev.omnium.sandbox.testkit.RouterBean;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 31, item 3 (the second phase): replicas behind one balancing address. An HAProxy balances
 * round robin over a fresh replica and one whose replay is paused; omnium's URL names only the
 * proxy ({@code replica=endpoint}). Freshness must be known per server a session reached, not per
 * address: no read may be stale beyond maxAge, and most reads must run on the fresh replica,
 * whichever server the lag watcher's own session reached.
 *
 * <p>The router's JMX bean, its Micrometer meters and {@code check} name each server behind the
 * address with its own lag, the paused one stale.
 */
class ReaderEndpointIT {
  private static final Duration MAX_AGE = Duration.ofSeconds(1);

  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(2).readerEndpoint()
      .sql("CREATE TABLE endpoint_seq (id bigint PRIMARY KEY)").build();

  @Test
  void noStaleReadBehindOneEndpointOverAFreshAndAPausedReplica() throws Exception {
    SANDBOX.cluster().pauseReplay(SANDBOX.replica(1));
    int fresh = SANDBOX.replica(0).port();
    int paused = SANDBOX.replica(1).port();
    // commit times of ids 1..n (nanoTime once the commit returned)
    AtomicLongArray committedAt = new AtomicLongArray(100_000);
    AtomicLong lastId = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger violations = new AtomicInteger();
    AtomicLong worstNanos = new AtomicLong();
    Map<Integer, AtomicInteger> byPort = new ConcurrentHashMap<>();
    List<Throwable> errors = new ArrayList<>();
    Thread writer = new Thread(() -> {
      try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary());
           PreparedStatement ps = c.prepareStatement("INSERT INTO endpoint_seq VALUES (?)")) {
        for (long id = 1; !stop.get() && id < committedAt.length(); id++) {
          ps.setLong(1, id);
          ps.executeUpdate();
          committedAt.set((int) id, System.nanoTime());
          lastId.set(id);
          Poll.pause(20);
        }
      } catch (Throwable t) {
        synchronized (errors) {
          errors.add(t);
        }
      }
    }, "endpoint-writer");
    try (OmniumDataSource ds = new OmniumDataSource(SANDBOX.endpointUrl("endpoint",
        "maxAge=" + MAX_AGE.toMillis() + "ms&heartbeatInterval=200ms"))) {
      writer.start();
      Poll.until(Duration.ofSeconds(10), "the first commits", () -> lastId.get() > 10);
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        Thread r = new Thread(() -> {
          try (Connection c = ds.getConnection()) {
            c.setReadOnly(true);
            while (!stop.get()) {
              long begin = System.nanoTime();
              long seen;
              int port;
              try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                  "SELECT coalesce(max(id), 0), inet_server_port() FROM endpoint_seq")) {
                rs.next();
                seen = rs.getLong(1);
                port = rs.getInt(2);
              }
              byPort.computeIfAbsent(port, k -> new AtomicInteger()).incrementAndGet();
              long missed = committedAt.get((int) Math.min(seen + 1, committedAt.length() - 1));
              if (missed != 0 && begin - missed > MAX_AGE.toNanos()) {
                violations.incrementAndGet();
                worstNanos.accumulateAndGet(begin - missed, Math::max);
              }
            }
          } catch (Throwable e) {
            synchronized (errors) {
              errors.add(e);
            }
          }
        }, "endpoint-reader-" + t);
        readers.add(r);
        r.start();
      }
      Poll.pause(10_000); // the load: 10 s of reads against a writer committing every 20 ms
      // each server behind the endpoint, by its own address, with its own lag and state
      RouterMXBean router = RouterBean.of("endpoint");
      Map<String, String> states = router.getReplicaStates();
      Map<String, Long> lag = router.getEffectiveLagMillis();
      String address = SANDBOX.readerEndpoint().hostPort();
      String freshServer = address + "/127.0.0.1:" + fresh;
      String pausedServer = address + "/127.0.0.1:" + paused;
      assertTrue(List.of(router.getReplicas()).containsAll(List.of(freshServer, pausedServer)),
          List.of(router.getReplicas()).toString());
      assertEquals("OK", states.get(freshServer), "states " + states);
      assertTrue(lag.get(freshServer) >= 0, "the fresh server's lag is known: " + lag);
      assertTrue(lag.get(pausedServer) == -1 || lag.get(pausedServer) > MAX_AGE.toMillis(),
          "the paused server is stale: lag " + lag + ", states " + states);
      assertMetersName(freshServer, pausedServer);
      assertCheckNames(address, freshServer, pausedServer);
      stop.set(true);
      for (Thread r : readers) r.join(30_000);
      writer.join(30_000);
    } finally {
      stop.set(true);
      SANDBOX.cluster().resumeReplay(SANDBOX.replica(1));
    }
    assertEquals(List.of(), errors);
    Map<Integer, Integer> reads = new TreeMap<>();
    byPort.forEach((k, v) -> reads.put(k, v.get()));
    int total = reads.values().stream().mapToInt(Integer::intValue).sum();
    System.out.printf("ReaderEndpointIT (PostgreSQL %s): %d reads in 10 s, by server port %s"
        + " (fresh %d, paused %d, else the primary: fallback); %d staleness violations%n",
        SANDBOX.cluster().version(), total, reads, fresh, paused, violations.get());
    assertEquals(0, violations.get(), "staleness violations, worst " + worstNanos.get() / 1_000_000
        + " ms; reads by server port " + reads + " (fresh " + fresh + ", paused " + paused + ")");
    assertTrue(reads.getOrDefault(fresh, 0) > total / 2, "most reads on the fresh replica "
        + fresh + ": " + reads);
  }

  /** A gauge per server behind the endpoint: the fresh one's lag within maxAge, the other's not. */
  private static void assertMetersName(String freshServer, String pausedServer)
      throws InterruptedException {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (OmniumMetrics metrics = new OmniumMetrics(ManagementFactory.getPlatformMBeanServer(),
        false)) {
      metrics.bindTo(registry);
      Gauge freshLag = registry.get("omnium.replica.lag")
          .tags("router", "endpoint", "replica", freshServer).gauge();
      Gauge pausedLag = registry.get("omnium.replica.lag")
          .tags("router", "endpoint", "replica", pausedServer).gauge();
      double maxAge = MAX_AGE.toMillis() / 1000.0;
      Poll.until(Duration.ofSeconds(10), "the fresh server's lag gauge within maxAge",
          () -> freshLag.value() <= maxAge);
      assertTrue(pausedLag.value() > maxAge, "the paused server's lag gauge: " + pausedLag.value());
    }
  }

  /**
   * {@code check} finds both servers behind the endpoint, says so, and reports each one's lag:
   * the fresh one fresh, the paused one stale.
   */
  private static void assertCheckNames(String address, String freshServer, String pausedServer) {
    String report = CheckReport.of(SANDBOX.endpointUrl("endpoint-check",
        "maxAge=" + MAX_AGE.toMillis() + "ms"));
    assertTrue(report.contains("replica address  replica1 " + address + ": 2 servers found"),
        report);
    assertTrue(serverRow(report, freshServer).contains("(fresh)"), report);
    assertTrue(serverRow(report, pausedServer).contains("(stale)"), report);
    assertTrue(serverRow(report, pausedServer).contains("paused"), report);
    assertTrue(report.contains(pausedServer + ": heartbeat lag"), report);
  }

  /** The servers table's row of {@code server} ({@code address/server}). */
  private static String serverRow(String report, String server) {
    for (String line : report.split("\n")) {
      if (line.startsWith("  replica1") && line.contains(server + " ")) return line;
    }
    throw new AssertionError("no row for " + server + " in\n" + report);
  }
}
