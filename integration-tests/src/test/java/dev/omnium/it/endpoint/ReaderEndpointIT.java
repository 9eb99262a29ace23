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
import dev.omnium.sandbox.testkit.Sessions;
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
import java.util.Set;
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
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(2).readerEndpoint().healAfterEach()
      .sql("CREATE TABLE endpoint_seq (id bigint PRIMARY KEY)",
          "CREATE TABLE endpoint_forced_seq (id bigint PRIMARY KEY)").build();

  @Test
  void noStaleReadBehindOneEndpointOverAFreshAndAPausedReplica() throws Exception {
    SANDBOX.cluster().pauseReplay(SANDBOX.replica(1));
    int fresh = SANDBOX.replica(0).port();
    int paused = SANDBOX.replica(1).port();
    try (OmniumDataSource ds = new OmniumDataSource(SANDBOX.endpointUrl("endpoint",
        "maxAge=" + MAX_AGE.toMillis() + "ms&heartbeatInterval=200ms"));
         Load load = new Load(ds, "endpoint_seq")) {
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
      Map<Integer, Integer> reads = load.stop();
      int total = reads.values().stream().mapToInt(Integer::intValue).sum();
      System.out.printf("ReaderEndpointIT (PostgreSQL %s): %d reads in 10 s, by server port %s"
          + " (fresh %d, paused %d, else the primary: fallback); %d staleness violations%n",
          SANDBOX.cluster().version(), total, reads, fresh, paused, load.violations.get());
      load.assertNoneStale(fresh, paused);
      assertTrue(reads.getOrDefault(fresh, 0) > total / 2, "most reads on the fresh replica "
          + fresh + ": " + reads);
    } finally {
      resumeReplay();
    }
  }

  /**
   * The case round robin does not force: the router opens while the fresh replica is down, so the
   * address's watcher and its first sessions can reach only the paused server. Every read goes to
   * the primary (the address is stale), none stale; once the fresh replica is back, the router
   * finds it behind the same address and most reads run there, still none stale.
   */
  @Test
  void watcherFirstOnThePausedServerFindsTheFreshOneWhenItReturns() throws Exception {
    int fresh = SANDBOX.replica(0).port();
    int paused = SANDBOX.replica(1).port();
    int primary = SANDBOX.primary().port();
    SANDBOX.cluster().pauseReplay(SANDBOX.replica(1));
    SANDBOX.cluster().stop(SANDBOX.replica(0), false);
    String address = SANDBOX.readerEndpoint().hostPort();
    String freshServer = address + "/127.0.0.1:" + fresh;
    String pausedServer = address + "/127.0.0.1:" + paused;
    try (OmniumDataSource ds = new OmniumDataSource(SANDBOX.endpointUrl("endpoint-forced",
        "maxAge=" + MAX_AGE.toMillis() + "ms&heartbeatInterval=200ms"));
         Load load = new Load(ds, "endpoint_forced_seq")) {
      RouterMXBean router = RouterBean.of("endpoint-forced");
      // the fresh replica down, the watcher's session can only be on the paused server
      Poll.until(Duration.ofSeconds(30), "a session of the router on the paused server",
          () -> Sessions.countLike(SANDBOX.cluster(), SANDBOX.replica(1), "endpoint-forced") > 0);
      Poll.pause(3_000); // 3 s of reads while only the paused server is reachable behind it
      Map<Integer, Integer> alone = load.window();
      assertEquals(List.of(), load.errors());
      assertEquals(List.of(address), List.of(router.getReplicas()),
          "the fresh server is down: one server behind the address");
      long lag = router.getEffectiveLagMillis().get(address);
      assertTrue(lag == -1 || lag > MAX_AGE.toMillis(), "the address is stale: lag "
          + router.getEffectiveLagMillis() + ", states " + router.getReplicaStates());
      assertEquals(Set.of(primary), alone.keySet(), "with only the paused server reachable every"
          + " read runs on the primary " + primary + ": " + alone + " (paused " + paused + ")");
      load.assertNoneStale(fresh, paused);

      SANDBOX.cluster().start(SANDBOX.replica(0));
      SANDBOX.cluster().awaitStreaming(SANDBOX.replica(0), Duration.ofSeconds(60));
      // every 2 s, the reads of the last 2 s: until most of them ran on the fresh server
      long[] windowStart = {System.nanoTime()};
      Map<Integer, Integer> last = new TreeMap<>();
      Duration found;
      try {
        found = Poll.until(Duration.ofSeconds(90), "most reads on the fresh server " + fresh
            + " once it is back", () -> {
            if (System.nanoTime() - windowStart[0] < 2_000_000_000L) return false;
            windowStart[0] = System.nanoTime();
            Map<Integer, Integer> w = load.window();
            last.clear();
            last.putAll(w);
            int total = w.values().stream().mapToInt(Integer::intValue).sum();
            return total > 0 && w.getOrDefault(fresh, 0) > total / 2;
          });
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "; the last 2 s by server port: " + last
            + " (paused " + paused + ", primary " + primary + ")", e);
      }
      Map<Integer, Integer> reads = load.stop();
      System.out.printf("ReaderEndpointIT (PostgreSQL %s), watcher first on the paused server:"
          + " reads by server port with the fresh replica down %s; most on it %d ms after it"
          + " streamed again (2 s windows; the last: %s); fresh %d, paused %d, primary %d;"
          + " all reads %s, %d staleness violations%n", SANDBOX.cluster().version(), alone,
          found.toMillis(), last, fresh, paused, primary, reads, load.violations.get());
      load.assertNoneStale(fresh, paused);
      assertTrue(List.of(router.getReplicas()).containsAll(List.of(freshServer, pausedServer)),
          List.of(router.getReplicas()).toString());
    } finally {
      SANDBOX.cluster().start(SANDBOX.replica(0));
      resumeReplay();
    }
  }

  /**
   * Resumes the paused replica's replay. The call may be cancelled by a conflict with the recovery
   * it resumes, after resuming it: it is called again, idempotent, until it returns.
   */
  private static void resumeReplay() throws InterruptedException {
    Poll.until(Duration.ofSeconds(30), "the paused replica's replay to resume", () -> {
      SANDBOX.cluster().resumeReplay(SANDBOX.replica(1));
      return true;
    });
  }

  /**
   * A writer committing every 20 ms into {@code table} on the primary, and four reader threads on
   * the router's connections (read-only, autocommit) reading the newest id and the port of the
   * server that ran the read. A read that missed a commit older than maxAge at its start is stale.
   */
  private static final class Load implements AutoCloseable {
    // commit times of ids 1..n (nanoTime once the commit returned)
    final AtomicLongArray committedAt = new AtomicLongArray(100_000);
    final AtomicLong lastId = new AtomicLong();
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger violations = new AtomicInteger();
    final AtomicLong worstNanos = new AtomicLong();
    final Map<Integer, AtomicInteger> byPort = new ConcurrentHashMap<>();
    final Map<Integer, AtomicInteger> recent = new ConcurrentHashMap<>();
    private final List<Throwable> errors = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    Load(OmniumDataSource ds, String table) throws InterruptedException {
      Thread writer = new Thread(() -> {
        try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary());
             PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?)")) {
          for (long id = 1; !stop.get() && id < committedAt.length(); id++) {
            ps.setLong(1, id);
            ps.executeUpdate();
            committedAt.set((int) id, System.nanoTime());
            lastId.set(id);
            Poll.pause(20);
          }
        } catch (Throwable t) {
          failed(t);
        }
      }, "endpoint-writer");
      threads.add(writer);
      writer.start();
      try {
        Poll.until(Duration.ofSeconds(10), "the first commits", () -> lastId.get() > 10);
      } catch (AssertionError | InterruptedException e) {
        close();
        throw e;
      }
      for (int t = 0; t < 4; t++) {
        Thread r = new Thread(() -> read(ds, table), "endpoint-reader-" + t);
        threads.add(r);
        r.start();
      }
    }

    private void read(OmniumDataSource ds, String table) {
      try (Connection c = ds.getConnection()) {
        c.setReadOnly(true);
        while (!stop.get()) {
          long begin = System.nanoTime();
          long seen;
          int port;
          try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
              "SELECT coalesce(max(id), 0), inet_server_port() FROM " + table)) {
            rs.next();
            seen = rs.getLong(1);
            port = rs.getInt(2);
          }
          byPort.computeIfAbsent(port, k -> new AtomicInteger()).incrementAndGet();
          recent.computeIfAbsent(port, k -> new AtomicInteger()).incrementAndGet();
          long missed = committedAt.get((int) Math.min(seen + 1, committedAt.length() - 1));
          if (missed != 0 && begin - missed > MAX_AGE.toNanos()) {
            violations.incrementAndGet();
            worstNanos.accumulateAndGet(begin - missed, Math::max);
          }
        }
      } catch (Throwable e) {
        failed(e);
      }
    }

    private void failed(Throwable t) {
      synchronized (errors) {
        errors.add(t);
      }
    }

    List<Throwable> errors() {
      synchronized (errors) {
        return List.copyOf(errors);
      }
    }

    /** @return the reads by server port since the last window (or the start), and starts anew */
    Map<Integer, Integer> window() {
      Map<Integer, Integer> w = new TreeMap<>();
      recent.forEach((port, n) -> w.put(port, n.getAndSet(0)));
      w.values().removeIf(n -> n == 0);
      return w;
    }

    /** Stops the load, expects no error, and returns every read by server port. */
    Map<Integer, Integer> stop() throws InterruptedException {
      close();
      assertEquals(List.of(), errors());
      Map<Integer, Integer> reads = new TreeMap<>();
      byPort.forEach((k, v) -> reads.put(k, v.get()));
      return reads;
    }

    void assertNoneStale(int fresh, int paused) {
      Map<Integer, Integer> reads = new TreeMap<>();
      byPort.forEach((k, v) -> reads.put(k, v.get()));
      assertEquals(0, violations.get(), "staleness violations, worst "
          + worstNanos.get() / 1_000_000 + " ms; reads by server port " + reads + " (fresh "
          + fresh + ", paused " + paused + ")");
    }

    @Override
    public void close() {
      stop.set(true);
      try {
        for (Thread t : threads) t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
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
  private static void assertCheckNames(String address, String freshServer, String pausedServer)
      throws InterruptedException {
    // check takes one measurement when it runs: on a loaded 2-core machine the fresh server's
    // replay can, that once, take longer than the 1 s maxAge, so it runs again (bounded)
    String[] report = new String[1];
    try {
      Poll.until(Duration.ofSeconds(30), "check's measurement of the fresh server within maxAge",
          () -> {
            report[0] = CheckReport.of(SANDBOX.endpointUrl("endpoint-check",
                "maxAge=" + MAX_AGE.toMillis() + "ms"));
            String row = row(report[0], freshServer);
            return row != null && row.contains("(fresh)");
          });
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; the last report:\n" + report[0], e);
    }
    assertCheckSays(report[0], address, freshServer, pausedServer);
  }

  private static void assertCheckSays(String report, String address, String freshServer,
      String pausedServer) {
    assertTrue(report.contains("replica address  replica1 " + address + ": 2 servers found"),
        report);
    assertTrue(serverRow(report, freshServer).contains("(fresh)"), report);
    assertTrue(serverRow(report, pausedServer).contains("(stale)"), report);
    assertTrue(serverRow(report, pausedServer).contains("paused"), report);
    assertTrue(report.contains(pausedServer + ": heartbeat lag"), report);
  }

  /** The servers table's row of {@code server} ({@code address/server}). */
  private static String serverRow(String report, String server) {
    String row = row(report, server);
    if (row == null) throw new AssertionError("no row for " + server + " in\n" + report);
    return row;
  }

  private static String row(String report, String server) {
    for (String line : report.split("\n")) {
      if (line.startsWith("  replica1") && line.contains(server + " ")) return line;
    }
    return null;
  }
}
