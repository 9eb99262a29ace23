package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Pure logic of router sharing, idle close, the fallback cap and the client-side bounds. */
class LifecycleUnitsTest {
  private static final String BASE = "jdbc:omnium:postgresql://primary:5432/db";

  /** Whether a permit was free at once. */
  private static boolean taken(FallbackBudget b) throws InterruptedException {
    return b.acquire(0, null) == FallbackBudget.Outcome.TAKEN;
  }

  static Connection stub() {
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
          if (method.getName().equals("hashCode")) return System.identityHashCode(proxy);
          if (method.getName().equals("equals")) return proxy == args[0];
          return null;
        });
  }

  @Test
  void anOpenConnectionKeepsItsRouterAndAnIdleOneRetiresOnce() {
    RouterUse use = new RouterUse();
    Object c = new Object();
    assertTrue(use.join(c));
    long later = System.nanoTime() + TimeUnit.HOURS.toNanos(1);
    assertFalse(use.retireIfIdle(later, 1), "held by an open connection");
    use.leave(c);
    use.leave(c); // a second close changes nothing
    assertEquals(0, use.open());
    assertFalse(use.retireIfIdle(System.nanoTime(), TimeUnit.HOURS.toNanos(1)), "not idle long");
    assertTrue(use.retireIfIdle(later, 1));
    assertFalse(use.retireIfIdle(later, 1), "retired once");
    assertFalse(use.join(new Object()), "a retired router takes no new connection");
  }

  @Test
  void theFallbackCapIsSharedByDatabaseAndUserAndADoubleReleaseFreesNothing() throws Exception {
    OmniumConfig a = OmniumConfig.of(BASE + "?user=u&fallbackPoolSize=2&applicationName=a", null);
    OmniumConfig b = OmniumConfig.of(BASE + "?user=u&fallbackPoolSize=5&applicationName=b", null);
    OmniumConfig other = OmniumConfig.of(BASE + "?user=v&fallbackPoolSize=2", null);
    FallbackBudget ba = FallbackBudget.join(a);
    FallbackBudget bb = FallbackBudget.join(b);
    FallbackBudget bo = FallbackBudget.join(other);
    try {
      assertSame(ba, bb, "one cap for one primary database and user");
      assertFalse(ba == bo, "another user has its own cap");
      assertEquals(2, bb.size, "the first configuration sets the cap");
      Connection c1 = stub();
      Connection c2 = stub();
      assertTrue(taken(ba));
      ba.hold(c1);
      assertTrue(taken(bb));
      bb.hold(c2);
      assertFalse(taken(ba), "the cap holds across routers");
      ba.release(c1);
      ba.release(c1); // released twice (close racing abort): frees one permit only
      assertEquals(1, ba.inUse());
      assertTrue(taken(ba));
      assertFalse(taken(ba));
      ba.cancel();
      bb.release(c2);
      assertEquals(0, ba.inUse());
    } finally {
      ba.leave();
      bb.leave();
      bo.leave();
    }
    FallbackBudget fresh = FallbackBudget.join(b);
    try {
      assertEquals(5, fresh.size, "a budget ends with its last router");
    } finally {
      fresh.leave();
    }
  }

  @Test
  void everyRouteGetsAClientSideBoundAndTheUsersOwnWins() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?statementTimeout=10s&replicaStatementTimeout=3s"
        + "&clientTimeoutMargin=1500ms&heartbeatInterval=1s", null);
    assertEquals(12, ClientTimeouts.socketTimeoutSeconds(c, Route.PRIMARY));
    assertEquals(12, ClientTimeouts.socketTimeoutSeconds(c, Route.FALLBACK));
    assertEquals(5, ClientTimeouts.socketTimeoutSeconds(c, Route.REPLICA));
    assertEquals(3, ClientTimeouts.socketTimeoutSeconds(c, Route.WATCHER));
    assertEquals(10, ClientTimeouts.socketTimeoutSeconds(c, Route.HEARTBEAT));
    Properties mine = new Properties();
    mine.setProperty("socketTimeout", "0");
    assertEquals("0", ClientTimeouts.apply(c, Route.PRIMARY, mine).getProperty("socketTimeout"));
  }

  @Test
  void aRotationReplacesOnlyTheSecrets() throws SQLException {
    OmniumConfig old = OmniumConfig.of(BASE + "?user=u&password=one&ssl=false", null);
    OmniumConfig rotated = OmniumConfig.of(BASE + "?user=u&password=two&ssl=false", null);
    assertEquals(old.routerKey(), rotated.routerKey());
    Map<String, String> secrets = rotated.secrets(Route.FALLBACK);
    assertEquals(Map.of("password", "two"), secrets);
    PgConnector connector =
        new PgConnector(old.primaryUrl(), old.physicalProperties(Route.FALLBACK), "test");
    connector.useSecrets(secrets, "rotated");
    assertFalse(connector.toString().contains("two"), "never shows the password");
  }

  @Test
  void theWriterLeaseIsAFewIntervalsAndNeverUnderTwoSeconds() {
    assertEquals(2_000, HeartbeatWriter.leaseMillis(Duration.ofMillis(200)));
    assertEquals(4_000, HeartbeatWriter.leaseMillis(Duration.ofSeconds(1)));
  }
}
