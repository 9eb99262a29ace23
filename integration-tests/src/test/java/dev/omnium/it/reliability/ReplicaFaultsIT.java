package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Suite 2: a replica crashes (immediate stop) and restarts, or freezes (SIGSTOP: a black hole) and
 * thaws, under several reader threads. No read-only autocommit statement and no first statement of
 * a read-only transaction surfaces an error; no read waits longer than replicaAcquireTimeout plus
 * one statement; reads return to the replica within a few heartbeat intervals of its recovery.
 */
@ExtendWith(LogScanned.class)
class ReplicaFaultsIT {
  static final Duration INTERVAL = Duration.ofMillis(100);
  static final Duration MAX_AGE = Duration.ofSeconds(1);
  static final Duration ACQUIRE = Duration.ofSeconds(1);
  /**
   * Scheduling margin added to every time bound: the CI machine has 2 cores shared by the primary,
   * the replica, the readers and other builds, and a thread can wait this long for a core.
   */
  static final long MARGIN_MS = 1500;
  /**
   * "A few heartbeat intervals": the watcher's next probe and one pool connect. A replica pool that
   * lost its connections refills with HikariCP's back-off, which is capped at the pool's connection
   * timeout (replicaAcquireTimeout), so that is added too.
   */
  static final int RETURN_INTERVALS = 5;

  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(1).healAfterEach()
      .heartbeat(INTERVAL).build();

  static String url(String app) {
    return SANDBOX.url(app, "maxAge=" + MAX_AGE.toMillis() + "ms&heartbeatInterval=" + INTERVAL.toMillis()
        + "ms&replicaAcquireTimeout=" + ACQUIRE.toMillis() + "ms&replicaPoolSize=4&fallbackPoolSize=4");
  }

  interface Fault {
    void inject() throws Exception;
  }

  @Test
  void crashAndRestart() throws Exception {
    PgNode r = SANDBOX.replica(0);
    run("crash", () -> {
      SANDBOX.cluster().stop(r, true);
      Thread.sleep(3000);
      SANDBOX.cluster().start(r);
    });
  }

  @Test
  void freezeAndThaw() throws Exception {
    PgNode r = SANDBOX.replica(0);
    // Longer than the client socket timeout the driver sets on replica connections
    // (replicaStatementTimeout 5 s + 2 s), as a hung host would be.
    run("freeze", () -> {
      SANDBOX.cluster().freeze(r);
      Thread.sleep(8000);
      SANDBOX.cluster().thaw(r);
    });
  }

  private void run(String app, Fault fault) throws Exception {
    String url = url(app);
    PgNode replica = SANDBOX.replica(0);
    Readers readers = new Readers(app, () -> DriverManager.getConnection(url), 3, 3, 20).start();
    long faultAt;
    long recoveredAt;
    List<String> stuck;
    try {
      Poll.until(Duration.ofSeconds(15), "reads on the replica before the fault",
          () -> readers.reads().stream().filter(Readers.Read::replica).count() >= 30);
      faultAt = System.nanoTime();
      fault.inject();
      SANDBOX.cluster().awaitCaughtUp(replica);
      recoveredAt = System.nanoTime();
      long since = recoveredAt;
      Poll.until(Duration.ofSeconds(20), "reads back on the replica after recovery",
          () -> readers.reads().stream().anyMatch(x -> x.replica() && x.begin() >= since));
      Thread.sleep(500);
    } finally {
      stuck = readers.stop(20_000);
    }
    List<Readers.Read> reads = readers.reads();
    List<Readers.Read> failed = reads.stream().filter(x -> x.error() != null).collect(Collectors.toList());
    long healthyMax = reads.stream().filter(x -> x.end() < faultAt && x.error() == null)
        .mapToLong(Readers.Read::millis).max().orElse(0);
    long bound = ACQUIRE.toMillis() + healthyMax + MARGIN_MS;
    List<Readers.Read> slow = reads.stream().filter(x -> x.millis() > bound).collect(Collectors.toList());
    long longest = reads.stream().mapToLong(Readers.Read::millis).max().orElse(0);
    long duringFault = reads.stream().filter(x -> x.begin() >= faultAt && x.end() <= recoveredAt).count();
    long fallbackDuringFault = reads.stream()
        .filter(x -> x.begin() >= faultAt && x.end() <= recoveredAt && x.error() == null && !x.replica()).count();
    long firstBack = reads.stream().filter(x -> x.replica() && x.begin() >= recoveredAt)
        .mapToLong(Readers.Read::begin).min().orElse(Long.MAX_VALUE);
    long backMs = TimeUnit.NANOSECONDS.toMillis(firstBack - recoveredAt);
    long backBound = RETURN_INTERVALS * INTERVAL.toMillis() + ACQUIRE.toMillis() + MARGIN_MS;
    new Figures("replica-faults-" + app)
        .put("reads", reads.size())
        .put("replicaReads", reads.stream().filter(x -> x.error() == null && x.replica()).count())
        .put("fallbackReads", reads.stream().filter(x -> x.error() == null && !x.replica()).count())
        .put("readsDuringFault", duringFault)
        .put("fallbackReadsDuringFault", fallbackDuringFault)
        .put("errors", failed.size())
        .put("commitErrors", readers.commitErrors().size())
        .put("healthyStatementMs", healthyMax)
        .put("longestReadMs", longest)
        .put("waitBoundMs", bound)
        .put("readsOverBound", slow.size())
        .put("backOnReplicaMs", backMs)
        .put("backBoundMs", backBound)
        .put("replicaAcquireFailures", RouterBean.of(app).getReplicaAcquireFailures())
        .put("retries", RouterBean.of(app).getRetries())
        .report();

    assertTrue(stuck.isEmpty(), "reader threads stuck: " + stuck);
    assertTrue(failed.isEmpty(), failed.size() + " read-only autocommit statements or first statements failed, e.g. "
        + failed.stream().limit(5).map(x -> x.thread() + ": " + x.error()).collect(Collectors.toList()));
    assertTrue(slow.isEmpty(), slow.size() + " reads waited longer than replicaAcquireTimeout (" + ACQUIRE.toMillis()
        + " ms) + one statement (" + healthyMax + " ms) + margin (" + MARGIN_MS + " ms) = " + bound + " ms; longest "
        + longest + " ms; e.g. " + slow.stream().limit(5)
        .map(x -> x.thread() + " " + x.millis() + " ms on " + (x.error() != null ? "error" : x.applicationName())
            + " began " + TimeUnit.NANOSECONDS.toMillis(x.begin() - faultAt) + " ms after the fault")
        .collect(Collectors.toList()));
    assertTrue(fallbackDuringFault > 0, "no read was served by the fallback during the fault");
    assertTrue(backMs <= backBound, "reads returned to the replica " + backMs + " ms after it recovered, bound "
        + backBound + " ms (" + RETURN_INTERVALS + " heartbeat intervals + replicaAcquireTimeout + margin)");
    Leaks.assertQuiescent(SANDBOX.cluster(), app);
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
  }
}
