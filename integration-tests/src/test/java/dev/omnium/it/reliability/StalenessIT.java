package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Suite 1, the bounded staleness checker: a read routed by omnium never misses a commit older than
 * maxAge, while replay is paused and resumed at random (0.5–8 s) and the replica is restarted. Run
 * with maxAge 1 s and 5 s; see {@link StalenessRun} for the check itself.
 */
@ExtendWith(LogScanned.class)
class StalenessIT {
  /** Each run stays near 30 s so that the reliability package fits the CI budget. */
  static final Duration RUN = Duration.ofSeconds(25);
  /** The driver's own writer (heartbeatWriter=true) keeps the heartbeat table beating. */
  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(1).heartbeatTableOnly().build();

  @Test
  void maxAgeOneSecond() throws Exception {
    check("stale1s", Duration.ofSeconds(1));
  }

  @Test
  void maxAgeFiveSeconds() throws Exception {
    check("stale5s", Duration.ofSeconds(5));
  }

  static void check(String app, Duration maxAge) throws Exception {
    StalenessRun.Options o = new StalenessRun.Options(app, SANDBOX.cluster(), maxAge, RUN);
    o.script = List.of("longPause", "restart"); // then random pauses of 0.5-8 s
    o.url = SANDBOX.url(app, "maxAge=" + maxAge.toMillis() + "ms&heartbeatInterval=100ms&heartbeatWriter=true");
    StalenessRun.Result r = new StalenessRun(o).run();
    report("staleness-" + app, o, r);

    assertTrue(r.stuckThreads.isEmpty(), "threads did not stop: " + r.stuckThreads);
    assertEquals(0, r.violations.size(), "reads missed commits older than maxAge:\n" + String.join("\n", r.violations));
    assertTrue(r.errors.isEmpty(), r.errors.size() + " reads failed: " + r.errors.subList(0, Math.min(10, r.errors.size())));
    assertTrue(r.faults("pause") >= 2 && r.faults("restart") == 1, "faults injected: " + r.faults);
    // The run must not pass vacuously: reads went to the replica and, during faults, to the fallback.
    assertTrue(r.replicaReads >= r.reads.size() / 10, "too few replica reads: " + r.replicaReads + " of " + r.reads.size());
    assertTrue(r.fallbackReads > 0, "no read took the fallback route although replay was paused");
    // ... and the checker can fail: the control reader, on the replica without omnium, saw stale data.
    assertTrue(r.controlViolations > 0, "the control reader never saw data older than maxAge: the checker proves nothing");
    Leaks.assertQuiescent(SANDBOX.cluster(), app);
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
  }

  static void report(String suite, StalenessRun.Options o, StalenessRun.Result r) {
    new Figures(suite)
        .put("maxAgeMs", o.maxAge.toMillis())
        .put("seconds", o.duration.toSeconds())
        .put("seed", r.seed)
        .put("commits", r.lastId)
        .put("reads", r.reads.size())
        .put("replicaReads", r.replicaReads)
        .put("fallbackReads", r.fallbackReads)
        .put("retries", r.retries)
        .put("replicaAcquireFailures", r.acquireFailures)
        .put("pauses", r.faults("pause"))
        .put("pausedMs", r.faultMillis("pause"))
        .put("longestPauseMs", r.longestFaultMillis("pause"))
        .put("restarts", r.faults("restart"))
        .put("freezes", r.faults("freeze"))
        .put("frozenMs", r.faultMillis("freeze"))
        .put("violations", r.violations.size())
        .put("worstReplicaStalenessMs", TimeUnit.NANOSECONDS.toMillis(r.worstReplicaStalenessNanos))
        .put("longestReadMs", TimeUnit.NANOSECONDS.toMillis(r.longestReadNanos))
        .put("readErrors", r.errors.size())
        .put("laterStatementErrors", r.laterErrors.size())
        .put("controlReads", r.controlReads.size())
        .put("controlViolations", r.controlViolations)
        .put("controlWorstStalenessMs", TimeUnit.NANOSECONDS.toMillis(r.worstControlStalenessNanos))
        .report();
  }
}
