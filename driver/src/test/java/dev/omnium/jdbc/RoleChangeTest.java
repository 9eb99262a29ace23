package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

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

  /** A pgjdbc session as far as RoleSignal looks at it: what the server last reported. */
  private static Connection reporting(String inHotStandby) {
    PGConnection pg = (PGConnection) Proxy.newProxyInstance(RoleChangeTest.class.getClassLoader(),
        new Class<?>[] {PGConnection.class}, (proxy, method, args) ->
            "getParameterStatus".equals(method.getName()) && "in_hot_standby".equals(args[0])
                ? inHotStandby : null);
    return (Connection) Proxy.newProxyInstance(RoleChangeTest.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) ->
            "unwrap".equals(method.getName()) ? pg : null);
  }

  @Test
  void theFirstAnswerThatReportsThePromotionStopsThePoolAtOnce() {
    LagWatcher w = watcher();
    AtomicInteger told = new AtomicInteger();
    try (HikariDataSource pool = new HikariDataSource()) {
      ReplicaEndpoint e = new ReplicaEndpoint("r1", w, pool, 8, false, told::incrementAndGet);
      long now = System.nanoTime();
      w.record(now, 0);
      e.answered(reporting("on"));
      e.answered(reporting(null)); // a server before 14 reports nothing: the probe decides
      assertTrue(w.isFresh(now, Duration.ofSeconds(5).toNanos()));
      assertEquals(0, told.get());

      e.answered(reporting("off"));
      assertFalse(w.isFresh(System.nanoTime(), Duration.ofSeconds(5).toNanos()));
      assertEquals(LagWatcher.State.NOT_IN_RECOVERY, w.state());
      e.answered(reporting("off")); // the other reads under way say so too: told once
      assertEquals(1, told.get());
    }
  }

  @Test
  void everyRouterOfTheProcessStopsItsPoolOnThatServerButNoOther() {
    LagWatcher mine = watcher();
    LagWatcher otherRouter = watcher();
    LagWatcher otherServer = watcher();
    LagWatcher closedRouter = watcher();
    try (HikariDataSource p1 = new HikariDataSource(); HikariDataSource p2 = new HikariDataSource();
         HikariDataSource p3 = new HikariDataSource();
         HikariDataSource p4 = new HikariDataSource()) {
      ReplicaEndpoint a = new ReplicaEndpoint("10.0.0.1:5432", mine, p1, 8);
      ReplicaEndpoint b = new ReplicaEndpoint("10.0.0.1:5432", otherRouter, p2, 8);
      ReplicaEndpoint c = new ReplicaEndpoint("10.0.0.2:5432", otherServer, p3, 8);
      ReplicaEndpoint d = new ReplicaEndpoint("10.0.0.1:5432", closedRouter, p4, 8);
      for (ReplicaEndpoint e : new ReplicaEndpoint[] {a, b, c, d}) ReplicasByHost.add(e);
      ReplicasByHost.remove(d);
      try {
        long now = System.nanoTime();
        for (LagWatcher w : new LagWatcher[] {mine, otherRouter, otherServer, closedRouter}) {
          w.record(now, 0);
        }
        a.answered(reporting("off"));
        assertEquals(LagWatcher.State.NOT_IN_RECOVERY, mine.state());
        assertEquals(LagWatcher.State.NOT_IN_RECOVERY, otherRouter.state());
        assertTrue(otherServer.isFresh(now, Duration.ofSeconds(5).toNanos()));
        assertTrue(closedRouter.isFresh(now, Duration.ofSeconds(5).toNanos()),
            "a closed router's endpoint is no longer told");
      } finally {
        for (ReplicaEndpoint e : new ReplicaEndpoint[] {a, b, c}) ReplicasByHost.remove(e);
      }
    }
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

  /** A new physical session that says what {@code inHotStandby} says, counting its closes. */
  private static Connection opened(String inHotStandby, AtomicInteger closed) {
    Map<String, String> reported = new HashMap<>();
    if (inHotStandby != null) reported.put("in_hot_standby", inHotStandby);
    Class<?>[] both = {Connection.class, PGConnection.class};
    return (Connection) Proxy.newProxyInstance(RoleChangeTest.class.getClassLoader(), both,
        (proxy, method, args) -> switch (method.getName()) {
          case "getParameterStatuses" -> reported;
          case "getParameterStatus" -> reported.get((String) args[0]);
          case "close" -> {
            closed.incrementAndGet();
            yield null;
          }
          case "isClosed" -> closed.get() > 0;
          default -> null;
        });
  }

  private static DataSource opening(Connection session) {
    return (DataSource) Proxy.newProxyInstance(RoleChangeTest.class.getClassLoader(),
        new Class<?>[] {DataSource.class},
        (proxy, method, args) -> "getConnection".equals(method.getName()) ? session : null);
  }

  /**
   * A session the replica pool opens on a primary is closed at once, never kept idle in the pool:
   * one opened just after the promotion emptied the pool (a fill already under way) would
   * otherwise stay there until its idle timeout.
   */
  @Test
  void theReplicaPoolKeepsNoSessionItOpensOnAPrimary() throws Exception {
    LagWatcher w = watcher();
    AtomicInteger promoted = new AtomicInteger();
    w.onRoleChange(promoted::incrementAndGet, () -> { });
    w.record(System.nanoTime(), 0);
    AtomicInteger closed = new AtomicInteger();
    ReplicaSessions reportsIt = new ReplicaSessions(opening(opened("off", closed)), w);
    SQLException e = assertThrows(SQLException.class, reportsIt::getConnection);
    assertEquals("08004", e.getSQLState());
    assertEquals(1, closed.get(), "the session on the primary is closed");
    assertEquals(LagWatcher.State.NOT_IN_RECOVERY, w.state(), "the report is noticed");
    assertEquals(1, promoted.get());

    // Before 14 the server reports nothing: the watcher's last answer decides.
    AtomicInteger closedToo = new AtomicInteger();
    ReplicaSessions known = new ReplicaSessions(opening(opened(null, closedToo)), w);
    assertEquals("08004", assertThrows(SQLException.class, known::getConnection).getSQLState());
    assertEquals(1, closedToo.get());

    // A standby's session is kept.
    LagWatcher standby = watcher();
    standby.record(System.nanoTime(), 0);
    AtomicInteger kept = new AtomicInteger();
    try (Connection c = new ReplicaSessions(opening(opened("on", kept)), standby)
        .getConnection()) {
      assertEquals(0, kept.get());
    }
  }
}
