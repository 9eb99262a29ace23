package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LentSessionsTest {
  private static Connection session() {
    return (Connection) Proxy.newProxyInstance(LentSessionsTest.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (p, m, a) -> {
          if (m.getName().equals("equals")) return p == a[0];
          if (m.getName().equals("hashCode")) return System.identityHashCode(p);
          if (m.getName().equals("toString")) return "session";
          throw new UnsupportedOperationException(m.getName());
        });
  }

  @Test
  void lentSessionsAreListedUntilReturned() {
    LentSessions lent = new LentSessions(2);
    Connection a = session();
    Connection b = session();
    lent.add(a);
    lent.add(b);
    assertEquals(new HashSet<>(List.of(a, b)), new HashSet<>(lent.snapshot()));
    lent.remove(a);
    assertEquals(List.of(b), lent.snapshot());
    lent.remove(b);
    assertTrue(lent.snapshot().isEmpty());
  }

  @Test
  void moreSessionsThanSlotsAreKeptToo() {
    LentSessions lent = new LentSessions(1);
    List<Connection> all = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Connection c = session();
      all.add(c);
      lent.add(c);
    }
    assertEquals(new HashSet<>(all), new HashSet<>(lent.snapshot()));
    assertEquals(5, lent.snapshot().size());
    for (Connection c : all) lent.remove(c);
    assertTrue(lent.snapshot().isEmpty());
  }

  @Test
  void concurrentBorrowersNeverLoseOrDuplicateASession() throws Exception {
    LentSessions lent = new LentSessions(4);
    int threads = 8;
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> ts = new ArrayList<>();
    List<Throwable> errors = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        try {
          go.await();
          for (int i = 0; i < 2000; i++) {
            Connection c = session();
            lent.add(c);
            if (!lent.snapshot().contains(c)) throw new AssertionError("lent session not listed");
            lent.remove(c);
            if (lent.snapshot().contains(c)) throw new AssertionError("returned session listed");
          }
        } catch (Throwable e) {
          synchronized (errors) {
            errors.add(e);
          }
        }
      });
      ts.add(th);
      th.start();
    }
    go.countDown();
    for (Thread th : ts) th.join(TimeUnit.MINUTES.toMillis(2));
    assertEquals(List.of(), errors);
    assertTrue(lent.snapshot().isEmpty());
  }
}
