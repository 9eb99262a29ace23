package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Which server a session reached, and a watcher for each server behind one address. */
class ServerWatchersTest {
  private final List<LagWatcher> made = new ArrayList<>();

  private static LagWatcher watcher(String name) {
    PgConnector never =
        new PgConnector("jdbc:postgresql://127.0.0.1:1/db", new Properties(), "test");
    return new LagWatcher(name, never, "replica_heartbeat", Duration.ofSeconds(1), "test-" + name);
  }

  private ServerWatchers servers(LagWatcher first) {
    return new ServerWatchers("endpoint:5001", first, k -> {
      LagWatcher w = watcher("endpoint:5001/" + k);
      made.add(w);
      return w;
    }, Duration.ofSeconds(60).toNanos());
  }

  private static ServerKey key(String addr, int port) {
    return ServerKey.of(addr, port, "2026-12-04 17:00:00+00", "7432");
  }

  @Test
  void aServerIsItsOwnAddressAndPortWithinItsCluster() {
    assertEquals("10.0.0.7:5432", key("10.0.0.7/32", 5432).label);
    assertEquals("[fd00::7]:5432", key("fd00::7/128", 5432).label);
    assertEquals(key("10.0.0.7", 5432), key("10.0.0.7/32", 5432));
    assertNotEquals(key("10.0.0.7", 5432), key("10.0.0.8", 5432));
    // another cluster on the same address is another server
    assertNotEquals(key("10.0.0.7", 5432), ServerKey.of("10.0.0.7", 5432, "x", "9999"));
    // over a Unix socket the server's start tells it apart
    ServerKey local = ServerKey.of(null, 0, "2026-12-04 17:00:00+00", "7432");
    assertEquals("local server started 2026-12-04 17:00:00+00", local.label);
    assertNotEquals(local, ServerKey.of(null, 0, "2026-12-04 18:00:00+00", "7432"));
  }

  @Test
  void theFirstServerIsTheAddresssWatchersAndEachOtherGetsItsOwn() {
    LagWatcher first = watcher("endpoint:5001");
    ServerWatchers s = servers(first);
    try {
      assertFalse(s.several());
      assertSame(first, s.watcherFor(key("10.0.0.1", 5432)));
      assertEquals(key("10.0.0.1", 5432), first.server());
      assertSame(first, s.watcherFor(key("10.0.0.1", 5432)));
      assertFalse(s.several(), "one server so far: nothing more on the hot path");
      LagWatcher second = s.watcherFor(key("10.0.0.2", 5432));
      assertNotNull(second);
      assertNotEquals(first, second);
      assertEquals(key("10.0.0.2", 5432), second.server());
      assertSame(second, s.watcherFor(key("10.0.0.2", 5432)));
      assertTrue(s.several());
      assertEquals(2, s.all().length);
      assertSame(first, s.all()[0]);
    } finally {
      s.closeOthers();
    }
  }

  @Test
  void atMostMaxServersAndNoneAfterClose() {
    LagWatcher first = watcher("endpoint:5001");
    ServerWatchers s = servers(first);
    try {
      for (int i = 1; i <= ServerWatchers.MAX_SERVERS; i++) {
        assertNotNull(s.watcherFor(key("10.0.0." + i, 5432)));
      }
      assertNull(s.watcherFor(key("10.0.0.99", 5432)), "bounded");
      assertEquals(ServerWatchers.MAX_SERVERS, s.all().length);
    } finally {
      s.closeOthers();
    }
    assertNull(s.watcherFor(key("10.0.0.100", 5432)), "closed: no new watcher");
  }

  @Test
  void theAddressMovedToAnotherServer() {
    LagWatcher first = watcher("endpoint:5001");
    ServerWatchers s = servers(first);
    try {
      s.watcherFor(key("10.0.0.1", 5432));
      LagWatcher second = s.watcherFor(key("10.0.0.2", 5432));
      assertTrue(s.firstMovedTo(key("10.0.0.2", 5432)));
      assertEquals(key("10.0.0.2", 5432), first.server());
      assertSame(first, s.watcherFor(key("10.0.0.2", 5432)));
      assertFalse(s.several(), "the second server's own watcher closed: " + second);
      assertFalse(s.firstMovedTo(key("10.0.0.2", 5432)), "already there");
    } finally {
      s.closeOthers();
    }
  }

  @Test
  void aServerUnreachedForLongIsForgotten() {
    LagWatcher first = watcher("endpoint:5001");
    ServerWatchers s = servers(first);
    try {
      s.watcherFor(key("10.0.0.1", 5432));
      s.watcherFor(key("10.0.0.2", 5432));
      long now = System.nanoTime();
      s.forgetUnseen(now);
      assertTrue(s.several(), "seen just now");
      s.forgetUnseen(now + Duration.ofSeconds(61).toNanos());
      assertFalse(s.several(), "unreached (never OK) for longer than the bound");
    } finally {
      s.closeOthers();
    }
  }

  /**
   * The address's watcher looks for other servers only after reads found none of its servers
   * fresh: a read that found one fresh, or no read at all, leaves nothing to look for.
   */
  @Test
  void onlyAReadThatFoundNoFreshServerCallsForALook() {
    LagWatcher first = watcher("endpoint:5001");
    ServerWatchers s = servers(first);
    ReplicaEndpoint e = new ReplicaEndpoint("endpoint:5001", first, null, 4, false, null, null, s);
    long maxAge = Duration.ofSeconds(1).toNanos();
    try {
      s.watcherFor(key("10.0.0.1", 5432));
      assertFalse(s.takeNoneWasFresh(), "nobody read");
      long now = System.nanoTime();
      first.record(now, 0.1);
      assertTrue(e.isFresh(now, maxAge, 0));
      assertFalse(s.takeNoneWasFresh(), "the read found the server fresh");
      first.record(now, 5);
      assertFalse(e.isFresh(now, maxAge, 0));
      assertTrue(s.takeNoneWasFresh(), "the read found no fresh server");
      assertFalse(s.takeNoneWasFresh(), "taken once per round");

      // a second server, unreachable here: never fresh
      assertNotNull(s.watcherFor(key("10.0.0.2", 5432)));
      assertTrue(s.several());
      first.record(now, 0.1);
      assertTrue(e.isFresh(now, maxAge, 0), "the first server is fresh");
      assertFalse(s.takeNoneWasFresh());
      first.record(now, 5);
      assertFalse(e.isFresh(now, maxAge, 0));
      assertTrue(s.takeNoneWasFresh(), "neither is fresh");
    } finally {
      s.closeOthers();
    }
  }
}
