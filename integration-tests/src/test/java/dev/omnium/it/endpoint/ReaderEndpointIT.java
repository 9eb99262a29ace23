package dev.omnium.it.endpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.RouterMXBean;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
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
 * <p>The router's JMX bean names each server behind the address with its own lag and state.
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
}
