package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.HealthCheck.Problem;
import dev.omnium.jdbc.HealthCheck.Report;
import dev.omnium.jdbc.HealthCheck.Severity;
import dev.omnium.sandbox.FakeTime;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code check} with skewed server clocks (libfaketime): the replica's lag is the clock-free
 * bound (fresh when it is, stale when replay is paused, whatever the replica's clock says), and
 * each server's clock offset is reported, as a NOTE, or DEGRADED beyond half of maxAge.
 */
class CheckClockSkewIT {
  /** One replica, the heartbeat written every 100 ms by the kit. */
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    Assumptions.assumeTrue(FakeTime.available(),
        () -> "skipped: cannot shift a server's clock: " + FakeTime.unavailableReason());
    cluster = SANDBOX.cluster();
  }

  @AfterEach
  void realClocks() {
    for (PgNode n : List.of(cluster.primary(), cluster.replica(0))) {
      if (!cluster.clockOffset(n).isZero()) cluster.skewClock(n, Duration.ZERO);
      cluster.resumeReplay(cluster.replica(0));
    }
    cluster.awaitStreaming(cluster.replica(0), Duration.ofSeconds(30));
  }

  static String url(String maxAge) {
    return "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?replica=" + cluster.replica(0).hostPort() + "&maxAge=" + maxAge
        + "&heartbeatInterval=100ms&applicationName=checkskew&user=" + cluster.user();
  }

  static Report check(String url) throws Exception {
    Report r = HealthCheck.check(url, new Properties());
    System.out.println("---- check (PostgreSQL " + cluster.version() + ") ----");
    System.out.println(r.text());
    return r;
  }

  static List<Problem> skewProblems(Report r, Severity severity, String where) {
    return r.problems.stream().filter(p -> p.severity() == severity
        && p.message().startsWith("clock skew") && p.where().startsWith(where))
        .collect(Collectors.toList());
  }

  static void skew(PgNode node, Duration offset) {
    cluster.skewClock(node, offset);
    cluster.awaitStreaming(cluster.replica(0), Duration.ofSeconds(30));
    cluster.awaitCaughtUp(cluster.replica(0));
  }

  @Test
  void aReplicaAheadIsFreshAndItsSkewIsDegradedBeyondHalfOfMaxAge() throws Exception {
    skew(cluster.replica(0), Duration.ofSeconds(3));
    Report r = check(url("1s"));
    HealthServer replica = r.replicas.get(0);
    assertTrue(r.isFresh(replica), "a healthy replica 3 s ahead must be fresh:\n" + r.text());
    assertTrue(replica.beatSeconds < 0.5, "lag " + replica.beatSeconds + " s:\n" + r.text());
    assertEquals(3.0, replica.clockOffset.offsetMicros() / 1e6, 0.5, r.text());
    assertEquals(0.0, r.primary.clockOffset.offsetMicros() / 1e6, 0.5, r.text());
    assertEquals(1, skewProblems(r, Severity.DEGRADED, "replica1").size(), r.text());
    assertTrue(skewProblems(r, Severity.DEGRADED, "primary").isEmpty(), r.text());
    assertEquals(HealthCheck.DEGRADED, r.exitCode(), r.text());
    String text = r.text();
    assertTrue(text.contains("+3.0") && text.contains("(fresh)"), text);
    assertTrue(r.json().contains("clockOffsetSeconds"), r.json());
  }

  @Test
  void smallSkewIsANoteAndTheClusterStaysHealthy() throws Exception {
    skew(cluster.replica(0), Duration.ofSeconds(3));
    Report r = check(url("10s"));
    assertEquals(1, skewProblems(r, Severity.NOTE, "replica1").size(), r.text());
    assertEquals(HealthCheck.HEALTHY, r.exitCode(), r.text());
    assertTrue(r.isFresh(r.replicas.get(0)), r.text());
  }

  @Test
  void aReplicaBehindWithReplayPausedIsStale() throws Exception {
    skew(cluster.replica(0), Duration.ofSeconds(-3));
    cluster.pauseReplay(cluster.replica(0));
    Thread.sleep(1500); // replay paused for longer than maxAge, while the primary keeps beating
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int exit = HealthCheck.run(url("1s"), new Properties(), false,
        new PrintStream(bytes, true, StandardCharsets.UTF_8));
    Report r = check(url("1s"));
    HealthServer replica = r.replicas.get(0);
    assertFalse(r.isFresh(replica), "a paused replica 3 s behind looks fresh:\n" + r.text());
    assertNotNull(replica.beatSeconds, r.text());
    assertTrue(replica.lagOver && replica.beatSeconds >= 1.0, r.text());
    assertTrue(r.problems.stream().anyMatch(p -> p.severity() == Severity.DEGRADED
        && p.message().contains("is over maxAge") && p.message().contains("paused")), r.text());
    assertEquals(-3.0, replica.clockOffset.offsetMicros() / 1e6, 0.5, r.text());
    assertEquals(HealthCheck.DEGRADED, exit, bytes.toString(StandardCharsets.UTF_8));
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(printed.contains("(stale)"), printed);
  }

  @Test
  void aSkewedPrimaryIsReportedAndTheReplicaStaysFresh() throws Exception {
    skew(cluster.primary(), Duration.ofSeconds(30));
    Report r = check(url("1s"));
    assertEquals(30.0, r.primary.clockOffset.offsetMicros() / 1e6, 0.5, r.text());
    assertEquals(1, skewProblems(r, Severity.DEGRADED, "primary").size(), r.text());
    assertTrue(skewProblems(r, Severity.DEGRADED, "replica1").isEmpty(), r.text());
    assertTrue(r.isFresh(r.replicas.get(0)), "the replica is healthy:\n" + r.text());
  }

  @Test
  void realClocksRaiseNoSkew() throws Exception {
    Report r = check(url("1s"));
    assertTrue(r.problems.stream().noneMatch(p -> p.message().startsWith("clock skew")), r.text());
    assertEquals(HealthCheck.HEALTHY, r.exitCode(), r.text());
    assertTrue(r.isFresh(r.replicas.get(0)), r.text());
  }
}
