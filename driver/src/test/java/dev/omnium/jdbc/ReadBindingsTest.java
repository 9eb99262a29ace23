package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.StubSessions.Session;
import dev.omnium.jdbc.StubSessions.StubPool;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The read side's state machine against stub sessions lent by a real HikariCP pool: bind, keep,
 * set aside while results are open, release once, reset on return.
 */
class ReadBindingsTest {
  static Router router;
  static OmniumConnection logical;
  StubPool replicaPool;
  ReplicaEndpoint replica;
  List<LogicalStatement> statements;
  ReadBindings reads;

  @BeforeAll
  static void router() throws SQLException {
    // the fallback pool stays empty, no test borrows from it
    router = StubSessions.router("unit-read-bindings");
    logical = new OmniumConnection(router, router.primary(), router.defaultMaxAgeNanos, false);
  }

  @AfterAll
  static void down() {
    router.close();
  }

  @BeforeEach
  void fresh() {
    replicaPool = new StubPool("unit-replica-" + System.nanoTime(), 8);
    LagWatcher watcher = new LagWatcher("r1", null, "replica_heartbeat", Duration.ofMillis(200),
        "omnium-lag-unit-unstarted");
    watcher.record(System.nanoTime(), 0.010);
    replica = new ReplicaEndpoint("r1", watcher, replicaPool.pool, 8);
    statements = new ArrayList<>();
    reads = new ReadBindings(router, router.primary());
  }

  static SessionState newState() {
    return new SessionState(router, router.primary(), null);
  }

  LogicalStatement statementOn(Connection c) throws SQLException {
    LogicalStatement s = new LogicalStatement(logical, ResultSet.TYPE_FORWARD_ONLY,
        ResultSet.CONCUR_READ_ONLY, LogicalStatement.UNSET);
    s.physicalFor(c);
    statements.add(s);
    return s;
  }

  Connection bindReplica() throws SQLException {
    return reads.bind(replica.borrow(), Route.REPLICA, replica, newState());
  }

  /** The stub session behind a new replica binding. */
  Session replicaSession() throws SQLException {
    return StubSessions.of(replicaPool.opened, bindReplica());
  }

  @Test
  void aBindingWithOpenResultsIsSetAsideAndGoesBackWhenTheyClose() throws Exception {
    Connection first = bindReplica();
    LogicalStatement open = statementOn(first);
    reads.leave(statements, false);
    assertNull(reads.connection(), "a new unit of work may bind elsewhere");
    assertEquals(1, replica.inUse(), "the session with open results is kept");
    assertTrue(open.boundTo(first));

    Connection second = bindReplica();
    assertEquals(2, replica.inUse());
    reads.releaseUnused(statements);
    assertEquals(2, replica.inUse(), "still held while the statement is open");

    open.detach(first); // the statement closed or ran elsewhere
    reads.releaseUnused(statements);
    assertEquals(1, replica.inUse());
    assertSame(second, reads.connection());
    reads.releaseAll(true);
    assertEquals(0, replica.inUse());
    assertEquals(0, replicaPool.active());
  }

  @Test
  void aStatementWhoseResultsAreClosedDoesNotHoldItsBinding() throws Exception {
    Connection c = bindReplica();
    LogicalStatement reused = statementOn(c); // kept open and re-executed, as loops do
    reused.physical.getResultSet().close();
    reads.leave(statements, false);
    assertEquals(0, replica.inUse(), "released at once: nothing is left to read on it");
    assertFalse(reused.boundTo(c), "detached; it re-creates itself on the next binding");
  }

  @Test
  void aBindingNobodyUsesIsReleasedAtOnceAndADeadOneEvenWithOpenStatements() throws Exception {
    bindReplica();
    reads.leave(statements, false);
    assertEquals(0, replica.inUse());

    Connection c = bindReplica();
    LogicalStatement open = statementOn(c);
    reads.leave(statements, true);
    assertEquals(0, replica.inUse(), "a dead session is evicted whatever holds it");
    assertFalse(open.boundTo(c), "its statements are detached");
    assertEquals(0, replicaPool.active());
  }

  @Test
  void aReleasedBindingClearedForTheNextUserKeepsNoSession() throws Exception {
    bindReplica();
    Binding b = reads.current();
    b.statements = 2;
    b.applied = SessionState.SCHEMA;
    assertFalse(reads.idle(), "bound");
    reads.releaseAll(true);
    assertTrue(reads.idle());
    assertNotNull(b.session(), "a released binding still names its last session");
    reads.clear();
    assertSame(b, reads.current(), "the binding object is reused");
    assertNull(b.session(), "no session stays reachable from a state kept for later");
    assertNull(b.route());
    assertNull(b.endpoint());
    assertEquals(0, b.statements);
    assertEquals(0, b.applied);
    assertFalse(b.retried);
    assertEquals(SessionEffect.NONE, b.effect);
    Connection again = bindReplica();
    assertSame(b, reads.current(), "bound again without a new binding");
    assertSame(Route.REPLICA, reads.route());
    assertSame(again, reads.connection());
    reads.releaseAll(true);
  }

  @Test
  void aKeptBindingStartsANewUnitOfWork() throws Exception {
    bindReplica();
    Binding b = reads.current();
    b.statements = 3;
    b.retried = true;
    assertTrue(reads.keep(System.nanoTime(), Duration.ofHours(1).toNanos(), 0, false));
    assertEquals(0, b.statements);
    assertFalse(b.retried);
    assertFalse(reads.keep(System.nanoTime(), Duration.ofHours(1).toNanos(), 0, true),
        "a serializable read leaves the replica");
    reads.releaseAll(true);
  }

  @Test
  void releaseAndAbortFromManyThreadsReleaseEachSessionOnce() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      for (int round = 0; round < 200; round++) {
        ReadBindings side = new ReadBindings(router, router.primary());
        side.bind(replica.borrow(), Route.REPLICA, replica, newState());
        List<LogicalStatement> none = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger failures = new AtomicInteger();
        List<Future<?>> all = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          int kind = t;
          all.add(pool.submit(() -> {
            try {
              go.await();
              if (kind == 0) side.abortAll();
              if (kind == 1) side.releaseAll(true);
              if (kind == 2) side.leave(none, false);
              if (kind == 3) side.statementClosed(none, true);
            } catch (Throwable e) {
              failures.incrementAndGet();
            }
            return null;
          }));
        }
        go.countDown();
        for (Future<?> f : all) f.get(10, TimeUnit.SECONDS);
        assertEquals(0, failures.get());
        assertEquals(0, replica.inUse(), "round " + round + ": in-use count drifted");
      }
    } finally {
      pool.shutdownNow();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (replicaPool.active() != 0 && System.nanoTime() < deadline) Thread.sleep(10);
    assertEquals(0, replicaPool.active(), "no session missed");
  }

  @Test
  void abortCutsTheSocketOnTheCallingThread() throws Exception {
    Session s = replicaSession();
    reads.abortAll();
    assertEquals(1, s.aborts.get(), "aborted before abortAll returned");
    assertEquals(0, replica.inUse());
  }

  @Test
  void aSessionWhoseReportedSettingsChangedIsResetBeforeItGoesBack() throws Exception {
    Session s = replicaSession();
    s.reported.put("TimeZone", "Pacific/Chatham"); // a raw SET the server reported
    reads.leave(statements, false);
    assertTrue(s.sql.contains(SessionReset.RESET), s.sql.toString());
    assertFalse(s.closed(), "reset, so kept in the pool");

    assertSame(s, replicaSession());
    reads.leave(statements, false);
    assertEquals(1, s.sql.size(), "nothing changed this time: no reset");
  }

  @Test
  void aSessionWhereRawSqlMayHaveChangedAnUnreportedSettingIsResetToo() throws Exception {
    Session s = replicaSession();
    reads.current().saw(SessionEffect.SETTING); // a SET search_path 15 does not report
    reads.leave(statements, false);
    assertEquals(List.of(SessionReset.RESET), s.sql);

    assertSame(s, replicaSession());
    assertEquals(SessionEffect.NONE, reads.current().effect, "a new borrower starts clean");
    reads.leave(statements, false);
    assertEquals(1, s.sql.size(), "nothing ran this time: no reset, no round trip");
  }

  @Test
  void aReadSessionThatStaysWritableAfterResetIsEvicted() throws Exception {
    Session s = replicaSession();
    s.reported.put("session_authorization", "someone");
    s.reported.put("default_transaction_read_only", "off");
    // the stub's RESET ALL restores read-only but not the authorization: evicted
    reads.leave(statements, false);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!s.closed() && System.nanoTime() < deadline) Thread.sleep(10);
    assertTrue(s.closed(), "evicted, never lent again");
  }

  @Test
  void jdbcStateIsAppliedAndUndoneOnReturn() throws Exception {
    SessionState state = newState();
    state.networkTimeout = 0; // what HikariCP restores when it read "unset"
    state.holdability = ResultSet.HOLD_CURSORS_OVER_COMMIT;
    state.set = SessionState.NETWORK_TIMEOUT | SessionState.HOLDABILITY;
    Connection raw = replica.borrow();
    Session s = StubSessions.of(replicaPool.opened, raw);
    s.networkTimeout = 7000; // the route's own socketTimeout
    reads.bind(raw, Route.REPLICA, replica, state);
    assertEquals(7000, s.networkTimeout, "0 never removes the route's bound");
    assertEquals(ResultSet.HOLD_CURSORS_OVER_COMMIT, s.holdability);
    reads.leave(statements, false);
    assertEquals(ResultSet.CLOSE_CURSORS_AT_COMMIT, s.holdability, "undone on return");
  }

  @Test
  void theEffectiveNetworkTimeoutNeverExceedsTheRoutesOwn() {
    assertEquals(5000, SessionState.effectiveNetworkTimeout(0, 5000));
    assertEquals(1000, SessionState.effectiveNetworkTimeout(1000, 5000));
    assertEquals(5000, SessionState.effectiveNetworkTimeout(60_000, 5000));
    assertEquals(0, SessionState.effectiveNetworkTimeout(0, 0));
    assertEquals(1000, SessionState.effectiveNetworkTimeout(1000, 0));
  }
}
