package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A session reporting a promotion: the replica stops being fresh at once, the pool told once. */
class RoleChangeTest {
  private static LagWatcher watcher() {
    PgConnector never =
        new PgConnector("jdbc:postgresql://127.0.0.1:1/db", new Properties(), "test");
    return new LagWatcher("r1", never, "replica_heartbeat", Duration.ofSeconds(1), "test-watcher");
  }

  @Test
  void aReportedPromotionMakesTheReplicaUnfitAtOnceAndRunsTheCallbackOnce() {
    LagWatcher w = watcher();
    AtomicInteger promoted = new AtomicInteger();
    AtomicInteger standby = new AtomicInteger();
    w.onRoleChange(promoted::incrementAndGet, standby::incrementAndGet);
    long now = System.nanoTime();
    w.record(now, 0.1);
    assertTrue(w.isFresh(now, Duration.ofSeconds(5).toNanos()));

    w.noticePromoted();
    assertFalse(w.isFresh(System.nanoTime(), Duration.ofSeconds(5).toNanos()));
    assertEquals(LagWatcher.State.NOT_IN_RECOVERY, w.state());
    assertEquals(1, promoted.get());
    w.noticePromoted(); // every session of the promoted server says so: one change, one callback
    assertEquals(1, promoted.get());
    assertEquals(0, standby.get());
  }

  @Test
  void anEndpointOfAPrimaryIsNeverPicked() {
    LagWatcher w = watcher();
    long now = System.nanoTime();
    w.record(now, 0);
    w.noticePromoted();
    assertFalse(w.isFresh(now + 1, Long.MAX_VALUE / 2), "a primary is never a fresh replica");
    assertEquals(Long.MAX_VALUE, w.effectiveLagNanos(now + 1));
  }
}
