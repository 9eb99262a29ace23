package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The alert fires once after lag stays over the threshold long enough, and clears once. */
class LagAlertTest {
  private static final long S = 1_000_000_000L;

  private final List<String> events = new ArrayList<>();
  private final List<LagAlertListener> listeners =
      new CopyOnWriteArrayList<>(List.of(new LagAlertListener() {
    @Override
    public void alertRaised(String replica, Duration lag, Duration over) {
      events.add("raised " + replica + " lag=" + (lag == null ? "unknown" : lag.toSeconds())
          + " over=" + over.toSeconds());
    }

    @Override
    public void alertCleared(String replica, Duration lag) {
      events.add("cleared " + replica + " lag=" + lag.toSeconds());
    }
  }));

  private LagAlert alert() {
    return new LagAlert("r1", Duration.ofSeconds(10), Duration.ofSeconds(60), listeners);
  }

  /** A new alert that evaluated {@code samples}: pairs of (seconds from start, lag in seconds). */
  private LagAlert alertAfter(long... samples) {
    LagAlert a = alert();
    for (int i = 0; i < samples.length; i += 2) {
      a.evaluate(samples[i] * S, samples[i + 1] * S);
    }
    return a;
  }

  @Test
  void firesOnceAfterLagStaysOverTheThresholdForTheConfiguredTime() {
    LagAlert a = alertAfter(0, 11, 59, 70);
    assertFalse(a.isFiring(), "59 s over is not yet 60 s");
    assertTrue(events.isEmpty());
    a.evaluate(60 * S, 71 * S);
    assertTrue(a.isFiring());
    a.evaluate(61 * S, 72 * S);
    a.evaluate(200 * S, 72 * S);
    assertEquals(List.of("raised r1 lag=71 over=60"), events, "fired exactly once");
  }

  @Test
  void clearsOnceWhenLagReturnsUnderTheThreshold() {
    LagAlert a = alertAfter(0, 20, 60, 20, 61, 2, 62, 1);
    assertFalse(a.isFiring());
    assertEquals(List.of("raised r1 lag=20 over=60", "cleared r1 lag=2"), events);
  }

  @Test
  void dippingUnderTheThresholdRestartsTheClock() {
    LagAlert a = alertAfter(0, 20, 50, 5, 51, 20, 100, 20);
    assertFalse(a.isFiring(), "only 49 s continuously over");
    a.evaluate(111 * S, 20 * S);
    assertTrue(a.isFiring());
  }

  @Test
  void unknownLagCountsAsOverTheThreshold() {
    LagAlert a = alert();
    a.evaluate(0, Long.MAX_VALUE);
    a.evaluate(60 * S, Long.MAX_VALUE);
    assertTrue(a.isFiring());
    assertEquals(List.of("raised r1 lag=unknown over=60"), events);
  }

  @Test
  void aFailingListenerDoesNotStopTheOthers() {
    listeners.add(0, new LagAlertListener() {
      @Override public void alertRaised(String replica, Duration lag,
          Duration over) { throw new IllegalStateException("boom"); }
      @Override public void alertCleared(String replica,
          Duration lag) { throw new IllegalStateException("boom"); }
    });
    LagAlert a = alertAfter(0, 20, 60, 20);
    assertEquals(1, events.size());
  }

  @Test
  void theWriterLockKeyIsStablePerTable() {
    assertEquals(HeartbeatWriter.lockKey("replica_heartbeat"),
        HeartbeatWriter.lockKey("replica_heartbeat"));
    assertTrue(HeartbeatWriter.lockKey("replica_heartbeat")
        != HeartbeatWriter.lockKey("other.replica_heartbeat"));
  }
}
