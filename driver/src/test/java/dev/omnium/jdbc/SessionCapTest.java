package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The process-wide cap on a server's pooled sessions: slots, their release, the first size. */
class SessionCapTest {
  /** A session as the cap sees it: closed or not. */
  private static Connection session(AtomicBoolean closed) {
    return (Connection) Proxy.newProxyInstance(SessionCapTest.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
          if (method.getName().equals("isClosed")) return closed.get();
          if (method.getName().equals("hashCode")) return System.identityHashCode(proxy);
          if (method.getName().equals("equals")) return proxy == args[0];
          return null;
        });
  }

  @Test
  void aSlotPerOpenSessionAndNoMore() throws Exception {
    SessionCap cap = SessionCap.join("cap-test-1", 2, "replicaPoolSize", "t");
    try {
      AtomicBoolean firstClosed = new AtomicBoolean();
      assertTrue(cap.reserve(null, 0, () -> false));
      cap.opened(session(firstClosed));
      assertTrue(cap.reserve(null, 0, () -> false));
      cap.cancel(); // a connect that failed gives its slot back
      assertTrue(cap.reserve(null, 0, () -> false));
      cap.opened(session(new AtomicBoolean()));
      assertEquals(2, cap.openSessions());
      assertFalse(cap.reserve(null, TimeUnit.MILLISECONDS.toNanos(20), () -> false),
          "all slots are open");
      assertFalse(cap.crowded(), "nobody waits any more");

      // a connect waits, bounded; meanwhile the cap says so, and a session closed frees its slot
      CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          return cap.reserve(null, TimeUnit.SECONDS.toNanos(10), () -> false);
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!cap.crowded() && System.nanoTime() < deadline) Thread.onSpinWait();
      assertTrue(cap.crowded(), "a waiting connect makes the cap crowded");
      firstClosed.set(true);
      assertTrue(waiting.get(10, TimeUnit.SECONDS), "the closed session's slot went to the waiter");
      assertFalse(cap.crowded());
      cap.opened(session(new AtomicBoolean()));
      assertEquals(2, cap.openSessions());
      // a router that closes stops waiting at once
      long t0 = System.nanoTime();
      assertFalse(cap.reserve(null, TimeUnit.SECONDS.toNanos(10), () -> true));
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "gave up at once");
    } finally {
      cap.leave();
    }
  }

  @Test
  void theFirstConfigurationSetsTheSizeUntilEveryoneLeft() {
    SessionCap a = SessionCap.join("cap-test-2", 3, "replicaPoolSize", "a");
    SessionCap b = SessionCap.join("cap-test-2", 8, "replicaPoolSize", "b");
    SessionCap other = SessionCap.join("cap-test-3", 8, "replicaPoolSize", "c");
    assertSame(a, b);
    assertEquals(3, b.size);
    assertNotSame(a, other);
    a.leave();
    SessionCap still = SessionCap.join("cap-test-2", 5, "replicaPoolSize", "d");
    assertSame(b, still, "one router still holds it");
    b.leave();
    still.leave();
    other.leave();
    SessionCap fresh = SessionCap.join("cap-test-2", 5, "replicaPoolSize", "e");
    assertEquals(5, fresh.size, "a new cap once the last router left");
    fresh.leave();
  }
}
