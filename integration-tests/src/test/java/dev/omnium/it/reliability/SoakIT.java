package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The soak: random faults (replay paused 0.5–8 s, replicas restarted, replicas frozen) on two
 * replicas with the staleness checker on. {@code mvn -B verify -Psoak} sets
 * {@code omnium.soak.minutes=10}; without the profile it is 0 and the same test runs a bounded
 * 20-second version, so the code path runs in every CI build.
 */
@ExtendWith(LogScanned.class)
class SoakIT {
  static final int MINUTES = Integer.getInteger("omnium.soak.minutes", 0);
  static final Duration SHORT = Duration.ofSeconds(20);
  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(2).heartbeatTableOnly().build();

  @Test
  void randomFaultsWithTheStalenessCheckerOn() throws Exception {
    String app = "soak";
    Duration duration = MINUTES > 0 ? Duration.ofMinutes(MINUTES) : SHORT;
    StalenessRun.Options o = new StalenessRun.Options(app, SANDBOX.cluster(), Duration.ofSeconds(1), duration);
    o.script = List.of("freeze", "restart", "longPause"); // every kind at least once, then random
    o.randomRestarts = true;
    o.randomFreezes = true;
    o.autocommitReaders = 2;
    o.transactionReaders = 1;
    o.url = SANDBOX.url(app, "maxAge=1s&heartbeatInterval=100ms&heartbeatWriter=true");
    StalenessRun.Result r = new StalenessRun(o).run();
    StalenessIT.report(MINUTES > 0 ? "soak-" + MINUTES + "min" : "soak-short", o, r);

    assertTrue(r.stuckThreads.isEmpty(), "threads did not stop: " + r.stuckThreads);
    assertEquals(0, r.violations.size(), "reads missed commits older than maxAge:\n" + String.join("\n", r.violations));
    assertTrue(r.errors.isEmpty(), r.errors.size() + " reads failed: " + r.errors.subList(0, Math.min(10, r.errors.size())));
    assertTrue(r.faults("pause") >= 1 && r.faults("freeze") >= 1 && r.faults("restart") >= 1,
        "every kind of fault must have been injected: " + r.faults);
    assertTrue(r.replicaReads > 0 && r.fallbackReads > 0, "reads per route: " + r.replicaReads + "/" + r.fallbackReads);
    assertTrue(r.controlViolations > 0, "the control reader never saw data older than maxAge: the checker proves nothing");
    Leaks.assertQuiescent(SANDBOX.cluster(), app);
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
  }
}
