package dev.omnium.it.switchover;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One switchover (or crash failover) of a two-node cluster under running workloads, and what each
 * workload saw: the old primary is stopped (fast shutdown, or immediate for a crash), the standby
 * promoted, the old primary rebuilt as a standby of the new one, until it is fresh again and the
 * workloads' reads are back on it. Every wait is bounded.
 */
final class Switchover {
  private static final Duration WAIT = Duration.ofSeconds(45);

  final PgCluster cluster;
  final PgNode oldPrimary;
  final PgNode newPrimary;
  final boolean crash;
  final double maxAgeSeconds;
  long switchedAt;
  long promotedAt;
  long rebuiltAt;
  long freshAt;
  long endedAt;
  /**
   * Tests: every wait must succeed. The peer comparison: a workload that never gets there (a
   * contender whose writes never reach the new primary) is noted and the sequence goes on.
   */
  boolean strict = true;
  /**
   * Zero: the standby is fresh when the primary goes (reads carry on there). Otherwise its replay
   * is paused first (so it is stale), and for this long after the primary went no node can serve
   * a read: then replay resumes and the standby is promoted.
   */
  Duration outageWithoutFreshStandby = Duration.ZERO;
  final List<String> notes = new ArrayList<>();
  /** Most fallback sessions (application_name ending in ":fallback") seen at once, per app. */
  final Map<String, Integer> maxFallbackSessions = new TreeMap<>();

  Switchover(PgCluster cluster, PgNode oldPrimary, PgNode newPrimary, boolean crash,
             double maxAgeSeconds) {
    this.cluster = cluster;
    this.oldPrimary = oldPrimary;
    this.newPrimary = newPrimary;
    this.crash = crash;
    this.maxAgeSeconds = maxAgeSeconds;
  }

  /** Runs the whole sequence with the workloads already started; stops them at the end. */
  void run(List<Workload> workloads, List<String> apps) throws Exception {
    for (Workload w : workloads) {
      await(w.name() + ": writes and reads on the standby before the switchover",
          () -> count(w, o -> o.write() && o.ok()) > 20
              && count(w, o -> !o.write() && o.ok() && o.inRecovery()) > 20);
    }
    boolean stale = !outageWithoutFreshStandby.isZero();
    if (stale) {
      cluster.pauseReplay(newPrimary);
      long paused = System.nanoTime();
      for (Workload w : workloads) {
        await(w.name() + ": reads on the fallback route (stale standby)",
            () -> count(w, o -> !o.write() && o.ok() && !o.inRecovery() && o.begin() > paused) > 5);
      }
    }
    switchedAt = System.nanoTime();
    cluster.stop(oldPrimary, crash);
    if (stale) {
      Thread.sleep(outageWithoutFreshStandby.toMillis()); // no node can serve a read now
      cluster.resumeReplay(newPrimary);
    }
    cluster.promote(newPrimary);
    promotedAt = System.nanoTime();
    FallbackSampler sampler = new FallbackSampler(cluster, newPrimary, apps).start();
    try {
      for (Workload w : workloads) {
        await(w.name() + ": writes on the new primary",
            () -> count(w, o -> o.write() && o.ok() && o.begin() > promotedAt) > 5);
      }
      cluster.rebuildAsStandby(oldPrimary, newPrimary);
      rebuiltAt = System.nanoTime();
      Poll.until(WAIT, oldPrimary + " to be fresh (heartbeat within maxAge)", () -> {
        try (Connection c = cluster.connect(oldPrimary); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT extract(epoch FROM now() - beat_at)::float8"
                 + " FROM replica_heartbeat WHERE id = 1")) {
          return rs.next() && rs.getDouble(1) <= maxAgeSeconds;
        }
      });
      freshAt = System.nanoTime();
      for (Workload w : workloads) {
        await(w.name() + ": reads on the rebuilt standby",
            () -> count(w, o -> !o.write() && o.ok() && o.inRecovery()
                && o.port() == oldPrimary.port() && o.begin() > freshAt) > 0);
      }
      Thread.sleep(1_500); // steady state after the return: the last second is measured
    } finally {
      sampler.stop();
      maxFallbackSessions.putAll(sampler.max);
      endedAt = System.nanoTime();
    }
  }

  private void await(String what, Callable<Boolean> condition) throws Exception {
    if (strict) {
      Poll.until(WAIT, what, condition);
      return;
    }
    try {
      Poll.until(Duration.ofSeconds(10), what, condition);
    } catch (AssertionError e) {
      notes.add("never within 10 s: " + what);
    }
  }

  static long count(Workload w, Predicate<Workload.Op> p) {
    return w.ops().stream().filter(p).count();
  }

  /** What one workload saw, as the figures of docs/reliability.md. */
  Map<String, Object> figures(Workload w) {
    List<Workload.Op> ops = w.ops();
    List<Workload.Op> writes = ops.stream().filter(Workload.Op::write).toList();
    List<Workload.Op> reads = ops.stream().filter(o -> !o.write()).toList();
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("writeOutageMs", longestGapMs(writes, endedAt));
    f.put("writesOk", writes.stream().filter(Workload.Op::ok).count());
    f.put("writesFailed", writes.stream().filter(o -> !o.ok()).count());
    f.put("writeFailureStates", states(writes));
    f.put("writes25006", writes.stream().filter(o -> "25006".equals(o.sqlState())).count());
    f.put("writesOnStandby", writes.stream().filter(o -> o.ok() && o.inRecovery()).count());
    f.put("readsOk", reads.stream().filter(Workload.Op::ok).count());
    f.put("readsFailed", reads.stream().filter(o -> !o.ok()).count());
    f.put("readsFailedAtCommit", reads.stream().filter(o -> !o.ok()
        && o.error().startsWith(Workload.AT_COMMIT)).count());
    f.put("readsFailedAtCommitAfterPromotion", reads.stream().filter(o -> !o.ok()
        && o.error().startsWith(Workload.AT_COMMIT) && o.begin() > promotedAt).count());
    f.put("readFailureStates", states(reads));
    List<Workload.Op> viaReplicaPool = onPrimaryViaReplicaPool(reads);
    f.put("readsOnPrimaryViaReplicaPool", (long) viaReplicaPool.size());
    f.put("readsOnPrimaryViaReplicaPoolAfterFirstAnswer", startedAfterFirstAnswer(viaReplicaPool));
    // Started while the promotion was under way (promote called, not yet seen to be done).
    f.put("readsOnPrimaryViaReplicaPoolStartedBeforePromoted", viaReplicaPool.stream()
        .filter(o -> o.begin() - promotedAt < 0).count());
    f.put("readsOnPrimaryViaReplicaPoolMaxMs", TimeUnit.NANOSECONDS.toMillis(viaReplicaPool
        .stream().mapToLong(o -> o.answered() - o.begin()).max().orElse(0)));
    f.put("readsBackOnStandbyMs", firstAfterMs(reads, freshAt, o -> o.ok() && o.inRecovery()
        && o.port() == oldPrimary.port()));
    long lastSecond = endedAt - TimeUnit.SECONDS.toNanos(1);
    List<Workload.Op> tail = reads.stream().filter(o -> o.ok() && o.begin() > lastSecond).toList();
    f.put("readsOnPrimaryLastSecondPct", tail.isEmpty() ? -1
        : Math.round(100.0 * tail.stream().filter(o -> !o.inRecovery()).count() / tail.size()));
    f.put("writerPoolWaitMaxMs", TimeUnit.NANOSECONDS.toMillis(writes.stream()
        .mapToLong(Workload.Op::waitNanos).max().orElse(0)));
    f.put("readMaxMs", TimeUnit.NANOSECONDS.toMillis(reads.stream()
        .mapToLong(o -> o.end() - o.begin()).max().orElse(0)));
    f.put("promotionMs", TimeUnit.NANOSECONDS.toMillis(promotedAt - switchedAt));
    f.put("writesBackAfterPromotionMs", firstAfterMs(writes, promotedAt, Workload.Op::ok));
    return f;
  }

  /**
   * Reads that ran on a primary (the server said {@code pg_is_in_recovery() = false}) in a
   * session of a replica pool (its {@code application_name} ends in {@code :replica}).
   */
  static List<Workload.Op> onPrimaryViaReplicaPool(List<Workload.Op> reads) {
    return reads.stream().filter(o -> !o.write() && o.answered() != 0 && !o.inRecovery()
        && o.applicationName() != null && o.applicationName().endsWith(":replica")).toList();
  }

  /**
   * Of those, how many started after the first of them had its answer: the answer carries the
   * promotion (in_hot_standby=off), so from then on no read may be lent a session of that pool.
   */
  static long startedAfterFirstAnswer(List<Workload.Op> viaReplicaPool) {
    long first = viaReplicaPool.stream().mapToLong(Workload.Op::answered).min()
        .orElse(Long.MAX_VALUE);
    return viaReplicaPool.stream().filter(o -> o.begin() - first > 0).count();
  }

  /** The first failure message per SQLState. */
  static Map<String, String> samples(List<Workload.Op> ops) {
    Map<String, String> m = new TreeMap<>();
    for (Workload.Op o : ops) {
      if (!o.ok()) m.putIfAbsent(o.sqlState(), o.error());
    }
    return m;
  }

  private static Map<String, Long> states(List<Workload.Op> ops) {
    Map<String, Long> m = new TreeMap<>();
    for (Workload.Op o : ops) {
      if (!o.ok()) m.merge(String.valueOf(o.sqlState()), 1L, Long::sum);
    }
    return m;
  }

  /**
   * The longest time without a successful write completing, from the first one on to {@code end}
   * (writes that never came back count until then).
   */
  static long longestGapMs(List<Workload.Op> writes, long end) {
    long last = -1;
    long gap = 0;
    for (Workload.Op o : writes.stream().filter(Workload.Op::ok)
        .sorted((a, b) -> Long.compare(a.end(), b.end())).toList()) {
      if (last >= 0) gap = Math.max(gap, o.end() - last);
      last = o.end();
    }
    if (last >= 0 && end > last) gap = Math.max(gap, end - last);
    return TimeUnit.NANOSECONDS.toMillis(gap);
  }

  private static long firstAfterMs(List<Workload.Op> ops, long from, Predicate<Workload.Op> p) {
    return ops.stream().filter(o -> o.begin() > from && p.test(o)).mapToLong(Workload.Op::begin)
        .min().stream().map(t -> TimeUnit.NANOSECONDS.toMillis(t - from)).findFirst().orElse(-1);
  }

  /** Samples the new primary's fallback sessions per application every 50 ms. */
  static final class FallbackSampler {
    final Map<String, Integer> max = new TreeMap<>();
    private final PgCluster cluster;
    private final PgNode node;
    private final List<String> apps;
    private final Thread thread;
    private volatile boolean running = true;

    FallbackSampler(PgCluster cluster, PgNode node, List<String> apps) {
      this.cluster = cluster;
      this.node = node;
      this.apps = new ArrayList<>(apps);
      this.thread = new Thread(this::loop, "switchover-fallback-sampler");
      this.thread.setDaemon(true);
    }

    FallbackSampler start() {
      thread.start();
      return this;
    }

    private void loop() {
      try (Connection c = cluster.connect(node); Statement st = c.createStatement()) {
        while (running) {
          try (ResultSet rs = st.executeQuery("SELECT application_name, count(*)::int"
              + " FROM pg_stat_activity WHERE application_name LIKE '%:fallback'"
              + " GROUP BY application_name")) {
            Map<String, Integer> now = new TreeMap<>();
            while (rs.next()) now.put(rs.getString(1), rs.getInt(2));
            synchronized (max) {
              for (String app : apps) {
                max.merge(app, now.getOrDefault(app + ":fallback", 0), Math::max);
              }
            }
          }
          Thread.sleep(50);
        }
      } catch (SQLException | InterruptedException e) {
        synchronized (max) {
          max.put("sampler-error: " + e, -1);
        }
      }
    }

    void stop() throws InterruptedException {
      running = false;
      thread.join(5_000);
    }
  }
}
