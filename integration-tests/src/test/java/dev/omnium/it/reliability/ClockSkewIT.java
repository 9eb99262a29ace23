package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.jdbc.RouterMXBean;
import dev.omnium.sandbox.FakeTime;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.JMX;
import javax.management.ObjectName;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The staleness checker with skewed server clocks (libfaketime): the replica's clock 3 s and 30 s
 * behind and ahead, then the primary's. In each run: no read misses a commit older than maxAge,
 * at least 90 % of the reads that began while the replica was healthy ran on it, the control
 * reader (plain pgjdbc on the replica) saw stale data during the scripted replay pause, and the
 * router's JMX bean reports the skewed server's clock offset. The JMX effective lag sampled while
 * the replica is healthy gives the measure's precision (how far it exceeds the real lag).
 */
@ExtendWith(LogScanned.class)
class ClockSkewIT {
  static final Duration RUN = Duration.ofSeconds(20);
  static final Duration MAX_AGE = Duration.ofSeconds(1);
  /** After a fault ends (and after the start), the replica counts as healthy this much later. */
  static final long SETTLE_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** The driver's own writer (heartbeatWriter=true) keeps the heartbeat table beating. */
  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(1).heartbeatTableOnly().build();

  @BeforeAll
  static void up() {
    Assumptions.assumeTrue(FakeTime.available(),
        () -> "skipped: cannot shift a server's clock: " + FakeTime.unavailableReason());
  }

  /** One skewed clock per case: the node, and by how much its clock is off. */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
      "replicaThreeSecondsBehind, skewr_m3, replica, -3",
      "replicaThreeSecondsAhead, skewr_p3, replica, 3",
      "replicaThirtySecondsBehind, skewr_m30, replica, -30",
      "replicaThirtySecondsAhead, skewr_p30, replica, 30",
      "primaryThirtySecondsAhead, skewp_p30, primary, 30",
      "primaryThreeSecondsBehind, skewp_m3, primary, -3"})
  void skewedClock(String name, String app, String node, int seconds) throws Exception {
    run(app, node.equals("primary") ? SANDBOX.primary() : SANDBOX.replica(0),
        Duration.ofSeconds(seconds));
  }

  /**
   * The price of the clock-free measure on the primary: one query per heartbeatInterval per
   * router, counted by the primary itself (its log with {@code log_statement=all}) over an idle
   * stretch of 8 s.
   */
  @Test
  void theMeasureCostsOneQueryPerIntervalOnThePrimary() throws Exception {
    String app = "skewcost";
    String url = SANDBOX.url(app, "maxAge=1000ms&heartbeatInterval=100ms");
    double perSecond;
    setLogStatement("all");
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      RouterMXBean bean = RouterBean.of(app);
      String replica = SANDBOX.replica(0).hostPort();
      Poll.until(Duration.ofSeconds(20), "the replica's lag to be known",
          () -> bean.getEffectiveLagMillis().get(replica) >= 0);
      long before = samplerQueriesLogged();
      long t0 = System.nanoTime();
      Poll.pause(8000);
      long after = samplerQueriesLogged();
      perSecond = (after - before) / ((System.nanoTime() - t0) / 1e9);
    } finally {
      setLogStatement(null);
    }
    new Figures("clockskew-cost")
        .put("heartbeatIntervalMs", 100)
        .put("replicas", 1)
        .put("primaryQueriesPerSecond", String.format(Locale.ROOT, "%.1f", perSecond))
        .report();
    assertTrue(perSecond >= 5 && perSecond <= 13, "expected about 10 primary queries/s for"
        + " heartbeatInterval 100 ms, the primary logged " + perSecond);
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
  }

  /** The sampler's statements in the primary's log so far. */
  private static long samplerQueriesLogged() throws Exception {
    String log = Files.readString(SANDBOX.primary().logFile());
    String needle = "pg_current_wal_insert_lsn()::text, extract(epoch FROM clock_timestamp())";
    long n = 0;
    for (int i = log.indexOf(needle); i >= 0; i = log.indexOf(needle, i + 1)) n++;
    return n;
  }

  private static void setLogStatement(String value) throws Exception {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement()) {
      st.execute(value == null ? "ALTER SYSTEM RESET log_statement"
          : "ALTER SYSTEM SET log_statement = '" + value + "'");
      st.execute("SELECT pg_reload_conf()");
    }
    Poll.pause(300); // the postmaster signals the reload to every backend
  }

  /** One JMX reading: when, the replica's effective lag (ms, -1 unknown), the skewed offset. */
  record Sample(long nanos, long lagMillis, Long offsetMillis) { }

  static void run(String app, PgNode skewed, Duration offset) throws Exception {
    PgNode replica = SANDBOX.replica(0);
    SANDBOX.cluster().skewClock(skewed, offset);
    List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
    StalenessRun.Options o = new StalenessRun.Options(app, SANDBOX.cluster(), MAX_AGE, RUN);
    o.script = List.of("longPause"); // the control reader's stale window, then healthy
    o.randomFaults = false;
    o.url = SANDBOX.url(app, "maxAge=" + MAX_AGE.toMillis()
        + "ms&heartbeatInterval=100ms&heartbeatWriter=true");
    StalenessRun.Result r;
    try {
      SANDBOX.cluster().awaitStreaming(replica, Duration.ofSeconds(30));
      String key = skewed == SANDBOX.primary() ? "primary" : replica.hostPort();
      Thread sampler = sampler(app, replica.hostPort(), key, samples);
      try {
        r = new StalenessRun(o).run();
      } finally {
        sampler.interrupt();
        sampler.join(10_000);
      }
    } finally {
      SANDBOX.cluster().skewClock(skewed, Duration.ZERO);
      SANDBOX.cluster().awaitStreaming(replica, Duration.ofSeconds(30));
    }

    long healthy = 0;
    long healthyOnReplica = 0;
    for (StalenessRun.Read read : r.reads) {
      if (r.healthyAt(read.begin(), SETTLE_NANOS)) {
        healthy++;
        if (read.route() == StalenessRun.Route.REPLICA) healthyOnReplica++;
      }
    }
    List<Long> healthyLag = new ArrayList<>();
    Long seenOffset = null;
    for (Sample s : samples) {
      if (s.offsetMillis() != null) seenOffset = s.offsetMillis();
      if (r.healthyAt(s.nanos(), SETTLE_NANOS) && s.lagMillis() >= 0) healthyLag.add(s.lagMillis());
    }
    Collections.sort(healthyLag);
    double share = healthy == 0 ? 0 : (double) healthyOnReplica / healthy;
    StalenessIT.report("clockskew-" + app, o, r);
    new Figures("clockskew-" + app + "-precision")
        .put("skewedNode", skewed.name())
        .put("offsetMs", offset.toMillis())
        .put("jmxOffsetMs", seenOffset)
        .put("healthyReads", healthy)
        .put("healthyReplicaReads", healthyOnReplica)
        .put("healthyReplicaShare", String.format(Locale.ROOT, "%.3f", share))
        .put("lagSamples", healthyLag.size())
        .put("effectiveLagP50Ms", percentile(healthyLag, 0.50))
        .put("effectiveLagP99Ms", percentile(healthyLag, 0.99))
        .put("effectiveLagMaxMs", percentile(healthyLag, 1.0))
        .report();

    assertTrue(r.stuckThreads.isEmpty(), "threads did not stop: " + r.stuckThreads);
    assertEquals(0, r.violations.size(), "reads missed commits older than maxAge with "
        + skewed.name()
        + " at " + offset + ":\n" + String.join("\n", r.violations));
    assertTrue(r.errors.isEmpty(), r.errors.size() + " reads failed: "
        + r.errors.subList(0, Math.min(10, r.errors.size())));
    assertTrue(r.faults("pause") == 1, "faults injected: " + r.faults);
    assertTrue(healthy >= 100, "too few reads while the replica was healthy: " + healthy);
    assertTrue(share >= 0.90, "only " + healthyOnReplica + " of " + healthy
        + " reads ran on the healthy replica with " + skewed.name() + " at " + offset);
    assertTrue(r.fallbackReads > 0, "no read took the fallback route although replay was paused");
    assertTrue(r.controlViolations > 0, "the control reader never saw data older than maxAge");
    assertNotNull(seenOffset, "JMX never reported the clock offset of " + skewed.name());
    assertTrue(Math.abs(seenOffset - offset.toMillis()) < 500, "JMX clock offset " + seenOffset
        + " ms for " + skewed.name() + ", skewed by " + offset.toMillis() + " ms");
    Leaks.assertQuiescent(SANDBOX.cluster(), app);
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
  }

  private static Thread sampler(String app, String replica, String key, List<Sample> out) {
    Thread t = new Thread(() -> {
      RouterMXBean bean = null;
      while (!Thread.currentThread().isInterrupted()) {
        try {
          if (bean == null) {
            ObjectName name = new ObjectName("dev.omnium:type=Router,name=" + app);
            if (ManagementFactory.getPlatformMBeanServer().isRegistered(name)) {
              bean = JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(), name,
                  RouterMXBean.class);
            }
          }
          if (bean != null) {
            Map<String, Long> lag = bean.getEffectiveLagMillis();
            Long l = lag.get(replica);
            Long off = bean.getClockOffsetMillis().get(key);
            out.add(new Sample(System.nanoTime(), l == null ? -1 : l, off));
          }
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          bean = null; // the router closed or is not there yet
        }
      }
    }, "clockskew-jmx-" + app);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static long percentile(List<Long> sorted, double p) {
    if (sorted.isEmpty()) return -1;
    int i = (int) Math.min(sorted.size() - 1, Math.ceil(p * sorted.size()) - 1);
    return sorted.get(Math.max(0, i));
  }
}
