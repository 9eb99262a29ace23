package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Which routers share a background session, and how long it lives. */
class BackgroundSessionsTest {
  private static Properties props(String... kv) {
    Properties p = new Properties();
    p.setProperty("user", "app");
    p.setProperty("password", "secret");
    p.setProperty("ApplicationName", "api:watcher");
    for (int i = 0; i < kv.length; i += 2) p.setProperty(kv[i], kv[i + 1]);
    return p;
  }

  @Test
  void settingsOfHowAClientUsesItsSessionDoNotSeparateThem() {
    Object base = BackgroundSessions.key("watcher", "jdbc:postgresql://r:5432/db", props(), 1);
    assertEquals(base, BackgroundSessions.key("watcher", "jdbc:postgresql://r:5432/db",
        props("defaultRowFetchSize", "50", "binaryTransfer", "false", "stringtype",
            "unspecified", "password", "other"), 1));
    // where and how it connects, and what it works with, do
    assertNotEquals(base, BackgroundSessions.key("watcher", "jdbc:postgresql://r:5433/db",
        props(), 1));
    assertNotEquals(base, BackgroundSessions.key("watcher", "jdbc:postgresql://r:5432/db",
        props("sslmode", "verify-full"), 1));
    assertNotEquals(base, BackgroundSessions.key("watcher", "jdbc:postgresql://r:5432/db",
        props("prepareThreshold", "0"), 1));
    assertNotEquals(base, BackgroundSessions.key("watcher", "jdbc:postgresql://r:5432/db",
        props("user", "other"), 1));
    assertNotEquals(base, BackgroundSessions.key("watcher", "jdbc:postgresql://r:5432/db",
        props("ApplicationName", "worker:watcher"), 1));
    assertNotEquals(base, BackgroundSessions.key("watcher", "jdbc:postgresql://r:5432/db",
        props(), 2));
    assertNotEquals(base, BackgroundSessions.key("sampler", "jdbc:postgresql://r:5432/db",
        props(), 1));
  }

  @Test
  void oneSessionForEveryHolderClosedByTheLast() {
    AtomicInteger created = new AtomicInteger();
    Object key = BackgroundSessions.key("watcher", "jdbc:postgresql://127.0.0.1:1/db", props(),
        "test");
    PgConnector connector =
        new PgConnector("jdbc:postgresql://127.0.0.1:1/db", new Properties(), "test");
    BackgroundSessions.Lease<LagWatcher> a = BackgroundSessions.acquire(key, () -> {
      created.incrementAndGet();
      return new BackgroundSessions.Shared<>(new LagWatcher("r1", connector, "replica_heartbeat",
          Duration.ofSeconds(1), "test-watcher"), connector);
    });
    BackgroundSessions.Lease<LagWatcher> b = BackgroundSessions.acquire(key, () -> {
      throw new AssertionError("the first one is shared");
    });
    assertSame(a.session(), b.session());
    assertEquals(1, created.get());
    assertNull(a.release(), "another router still holds it");
    assertNull(a.release(), "a second release of the same hold changes nothing");
    assertSame(b.session(), b.release(), "the last holder closes it");
    BackgroundSessions.Lease<LagWatcher> c = BackgroundSessions.acquire(key, () -> {
      created.incrementAndGet();
      return new BackgroundSessions.Shared<>(new LagWatcher("r1", connector, "replica_heartbeat",
          Duration.ofSeconds(1), "test-watcher"), connector);
    });
    assertEquals(2, created.get(), "a new one once the last holder let go");
    c.release();
  }
}
