package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fallback cap's wait: first come, first served, and left as soon as a replica can serve the
 * waiting unit of work after all (the caller routes it there instead of waiting for the primary).
 */
class FallbackBudgetTest {
  private static final long LONG = TimeUnit.SECONDS.toNanos(60);
  private static final long DEADLINE = TimeUnit.SECONDS.toNanos(30);

  private FallbackBudget budget;

  @BeforeEach
  void join() throws SQLException {
    budget = FallbackBudget.join(OmniumConfig.of("jdbc:omnium:postgresql://primary:5432/db"
        + "?user=budget-test&fallbackPoolSize=1", null));
  }

  @AfterEach
  void leave() {
    budget.leave();
  }

  private CompletableFuture<FallbackBudget.Outcome> waiter(BooleanSupplier reroute) {
    CompletableFuture<FallbackBudget.Outcome> f = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        f.complete(budget.acquire(LONG, reroute));
      } catch (Throwable e) {
        f.completeExceptionally(e);
      }
    }, "budget-waiter");
    t.setDaemon(true);
    t.start();
    return f;
  }

  private void awaitWaiting(int n) throws InterruptedException {
    long until = System.nanoTime() + DEADLINE;
    while (budget.waiting() != n) {
      assertTrue(System.nanoTime() < until, "waiters: " + budget.waiting() + ", expected " + n);
      Thread.sleep(5);
    }
  }

  private static FallbackBudget.Outcome within(CompletableFuture<FallbackBudget.Outcome> f)
      throws Exception {
    return f.get(DEADLINE, TimeUnit.NANOSECONDS);
  }

  /** The only permit taken here, then a waiter that asks {@code reroute}, once it waits. */
  private CompletableFuture<FallbackBudget.Outcome> queuedBehindTheOnlyPermit(
      BooleanSupplier reroute) throws Exception {
    assertEquals(FallbackBudget.Outcome.TAKEN, budget.acquire(0, null));
    CompletableFuture<FallbackBudget.Outcome> w = waiter(reroute);
    awaitWaiting(1);
    return w;
  }

  @Test
  void aWaiterLeavesWithoutAPermitOnceAReplicaCanServeIt() throws Exception {
    AtomicBoolean replicaFresh = new AtomicBoolean();
    CompletableFuture<FallbackBudget.Outcome> w = queuedBehindTheOnlyPermit(replicaFresh::get);
    replicaFresh.set(true); // no permit is given back: the waiter must look for itself
    assertEquals(FallbackBudget.Outcome.REROUTED, within(w));
    assertEquals(0, budget.waiting());
    assertEquals(1, budget.inUse(), "the rerouted waiter took nothing");
    budget.cancel();
    assertEquals(0, budget.inUse());
  }

  @Test
  void waitersAreServedInTheOrderTheyCame() throws Exception {
    AtomicBoolean never = new AtomicBoolean();
    CompletableFuture<FallbackBudget.Outcome> first = queuedBehindTheOnlyPermit(never::get);
    CompletableFuture<FallbackBudget.Outcome> second = waiter(null);
    awaitWaiting(2);
    // both keep their places across their rechecks of the replicas
    Thread.sleep(3 * TimeUnit.NANOSECONDS.toMillis(FallbackBudget.RECHECK_NANOS));
    budget.cancel();
    assertEquals(FallbackBudget.Outcome.TAKEN, within(first));
    assertEquals(1, budget.waiting(), "the second still waits");
    budget.cancel();
    assertEquals(FallbackBudget.Outcome.TAKEN, within(second));
    budget.cancel();
    assertEquals(0, budget.inUse());
  }

  @Test
  void aWaitThatTimesOutTakesNothingAndLetsTheNextIn() throws Exception {
    Connection held = LifecycleUnitsTest.stub();
    assertEquals(FallbackBudget.Outcome.TAKEN, budget.acquire(0, null));
    budget.hold(held);
    assertEquals(FallbackBudget.Outcome.TIMED_OUT,
        budget.acquire(TimeUnit.MILLISECONDS.toNanos(50), () -> false));
    assertEquals(0, budget.waiting());
    budget.release(held);
    assertEquals(0, budget.inUse());
    assertEquals(FallbackBudget.Outcome.TAKEN, budget.acquire(0, () -> false));
    budget.cancel();
  }
}
