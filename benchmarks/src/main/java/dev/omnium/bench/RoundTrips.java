package dev.omnium.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Cases 5 and 7, outside JMH: what each contender costs the servers, counted, not timed.
 *
 * <p>Case 5: for a fixed number of transactions per contender, on one cluster, contender after
 * contender: round trips counted on the wire in front of each server ({@link WireCounter}: the
 * server's ReadyForQuery messages, one per round trip) and statements counted by the servers
 * themselves ({@code pg_stat_statements} calls, utility statements such as BEGIN and COMMIT
 * included), before/after deltas. Background work of the harness and of omnium's lag watcher
 * (its own {@code bench:watcher} and {@code bench:sampler} sessions, the heartbeat table) is left out and shown separately.
 *
 * <p>Case 7: replay paused on the replica; where each contender's read-only transactions run, and,
 * for omnium, 16 threads reading at once while a sampler watches {@code pg_stat_activity} on the
 * primary: the number of {@code bench:fallback} sessions must never exceed fallbackPoolSize.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.RoundTrips [--tx 1000] [--out file.md]</pre>
 * Prints a Markdown section and exits non-zero when omnium adds a round trip or exceeds its cap.
 */
public final class RoundTrips {
  private static final EnumSet<Contender> READERS = EnumSet.of(Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
      Contender.OMNIUM_DATASOURCE, Contender.PGJDBC_MULTIHOST, Contender.AWS_WRAPPER_SRW);
  private static final EnumSet<Contender> WRITERS = EnumSet.of(Contender.PRIMARY_POOL, Contender.OMNIUM_DRIVER,
      Contender.OMNIUM_DATASOURCE);

  private final BenchCluster cluster;
  private final WireCounter primaryWire;
  private final WireCounter replicaWire;
  private final int tx;
  private final List<String> problems = new ArrayList<>();

  private RoundTrips(BenchCluster cluster, WireCounter primaryWire, WireCounter replicaWire, int tx) {
    this.cluster = cluster;
    this.primaryWire = primaryWire;
    this.replicaWire = replicaWire;
    this.tx = tx;
  }

  @FunctionalInterface
  interface Work {
    void run(DataSource ds, int i) throws SQLException;
  }

  /** One contender's counts for one case. */
  static final class Row {
    final String kase;
    final Contender contender;
    final double roundTrips;
    final double primaryRoundTrips;
    final double replicaRoundTrips;
    final double statements;
    final String detail;
    final String bySession;
    final String background;
    /** Sessions opened on the servers in the window (the lag watcher's aside): each a session closed. */
    final long sessionsOpened;

    Row(String kase, Contender contender, double roundTrips, double primaryRoundTrips, double replicaRoundTrips,
        double statements, String detail, String bySession, String background, long sessionsOpened) {
      this.bySession = bySession;
      this.sessionsOpened = sessionsOpened;
      this.kase = kase;
      this.contender = contender;
      this.roundTrips = roundTrips;
      this.primaryRoundTrips = primaryRoundTrips;
      this.replicaRoundTrips = replicaRoundTrips;
      this.statements = statements;
      this.detail = detail;
      this.background = background;
    }
  }

  public static void main(String[] args) throws Exception {
    int tx = 1000;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--tx": tx = Integer.parseInt(args[++i]); break;
        case "--out": out = Path.of(args[++i]); break;
        default: throw new IllegalArgumentException("usage: RoundTrips [--tx N] [--out file.md]; unknown " + args[i]);
      }
    }
    String md;
    List<String> problems;
    try (BenchCluster cluster = BenchCluster.start();
         WireCounter pw = new WireCounter(cluster.primary().port());
         WireCounter rw = new WireCounter(cluster.replica().port())) {
      RoundTrips rt = new RoundTrips(cluster, pw, rw, tx);
      md = rt.run();
      problems = rt.problems;
    }
    System.out.println(md);
    if (out != null) {
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md);
      System.out.println("written to " + out);
    }
    if (!problems.isEmpty()) {
      System.err.println("TARGET MISSED: " + String.join("; ", problems));
      System.exit(2);
    }
  }

  private String run() throws Exception {
    List<Row> rows = new ArrayList<>();
    for (Contender c : READERS) {
      rows.add(measure("read-only transaction (case 1)", c, true, (ds, i) -> Workloads.readTx(ds, 1 + i % BenchCluster.ROWS)));
    }
    for (Contender c : WRITERS) {
      rows.add(measure("write transaction (case 2)", c, false, (ds, i) -> Workloads.writeTx(ds, i)));
    }
    for (Contender c : new Contender[] {Contender.OMNIUM_DRIVER, Contender.OMNIUM_DATASOURCE}) {
      rows.add(measure(RYW_WRITE, c, false, "&readYourWrites=thread", (ds, i) -> Workloads.writeTx(ds, i)));
    }
    for (Contender c : READERS) {
      rows.add(measureAutocommit(c));
    }
    for (Contender c : new Contender[] {Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
        Contender.OMNIUM_DATASOURCE}) {
      rows.add(measureLightTraffic(c));
    }
    for (Contender c : new Contender[] {Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
        Contender.OMNIUM_DATASOURCE}) {
      rows.add(measure(UNCLASSIFIED_CALL, c, true, (ds, i) -> Workloads.readTxCalling(ds, 1 + i % BenchCluster.ROWS)));
    }
    StringBuilder b = new StringBuilder();
    b.append("### Round trips and statements per unit of work (case 5)\n\n");
    b.append("Counted for ").append(tx).append(" units of work per contender, one thread, after warm-up (pools full), on one ")
        .append("cluster, by a pass-through in front of each server and by the servers themselves. *Round trips*: the ")
        .append("servers' ReadyForQuery messages, one per request (simple query or extended-protocol Sync). pgjdbc sends a ")
        .append("transaction's `BEGIN` as a request of its own but pipelined with the first query, so the client waits ")
        .append("one time less than this count. *Statements*: `pg_stat_statements` calls on primary + replica (it lists ")
        .append("`BEGIN` but not pgjdbc's `COMMIT`, a re-used server-prepared statement). omnium's lag watcher (`")
        .append(Contender.APP).append(":watcher`) and WAL sampler (`").append(Contender.APP)
        .append(":sampler`) sessions, one query per ").append(Contender.HEARTBEAT_INTERVAL)
        .append(" each, and the harness's heartbeat writer are background work: shown apart, not counted. *Sessions opened*: ")
        .append("connections the servers accepted in the window, the watcher's and sampler's aside; a pooled session omnium closes ")
        .append("instead of lending it again (state a reset cannot undo) is replaced by one. The last case calls a ")
        .append("function of the application's, which the driver cannot classify from the statement's text: the session ")
        .append("is reset and checked once at its return (issue 32), a round trip the limit, which never resets, does not ")
        .append("pay; it is shown, not held to the limit.\n\n");
    b.append("| work | contender | round trips / op | on primary | on replica | statements / op | sessions opened | statements per op (server's view) | round trips by session (application_name) | background in the window |\n");
    b.append("|---|---|---:|---:|---:|---:|---:|---|---|---|\n");
    Map<String, Double> limitByCase = new LinkedHashMap<>();
    for (Row r : rows) {
      if (r.contender == Contender.REPLICA_POOL || r.contender == Contender.PRIMARY_POOL) {
        limitByCase.put(r.kase, r.roundTrips);
      }
    }
    // the limit of a write with read-your-writes is the same write on HikariCP straight to the primary
    limitByCase.put(RYW_WRITE, limitByCase.get("write transaction (case 2)"));
    limitByCase.remove(UNCLASSIFIED_CALL); // shown: its check at return is the point
    for (Row r : rows) {
      b.append("| ").append(r.kase).append(" | ").append(r.contender.label()).append(" | ")
          .append(fmt(r.roundTrips)).append(" | ").append(fmt(r.primaryRoundTrips)).append(" | ")
          .append(fmt(r.replicaRoundTrips)).append(" | ").append(fmt(r.statements)).append(" | ").append(r.sessionsOpened)
          .append(" | ").append(r.detail).append(" | ").append(r.bySession).append(" | ")
          .append(r.background).append(" |\n");
      Double limit = limitByCase.get(r.kase);
      boolean omnium = r.contender == Contender.OMNIUM_DRIVER || r.contender == Contender.OMNIUM_DATASOURCE;
      if (omnium && limit != null && r.roundTrips > limit + 0.005) {
        problems.add(r.contender + " sends " + fmt(r.roundTrips) + " round trips per " + r.kase + " against "
            + fmt(limit) + " for the limit");
      }
      if (omnium && r.sessionsOpened > 0) {
        problems.add(r.contender + " opened " + r.sessionsOpened + " sessions in " + r.kase + ": a pooled session was"
            + " closed instead of lent again");
      }
    }
    b.append('\n');
    b.append(stale());
    b.append(problems.isEmpty()
        ? "Check passed: omnium's round trips per unit of work equal the limit's in every case, it closed no pooled "
            + "session (ordinary work leaves nothing a reset must undo), and its fallback sessions on the primary "
            + "stayed within fallbackPoolSize.\n"
        : "TARGET MISSED: " + String.join("; ", problems) + "\n");
    return b.toString();
  }

  static final String RYW_WRITE = "write transaction, readYourWrites=thread (case 2)";
  static final String UNCLASSIFIED_CALL = "read-only transaction calling an application function (case 1's shape)";
  static final String LIGHT_TRAFFIC =
      "autocommit read every 600 ms, new PreparedStatement, held connection (light traffic)";
  /** Reads in the light-traffic case: each one after the pooled session idled past 500 ms. */
  static final int LIGHT_READS = 20;

  private Row measure(String kase, Contender contender, boolean reads, Work work) throws Exception {
    return measure(kase, contender, reads, "", work);
  }

  private Row measure(String kase, Contender contender, boolean reads, String omniumOptions, Work work)
      throws Exception {
    DataSource ds = contender.open(cluster, primaryWire.hostPort(), replicaWire.hostPort(), omniumOptions);
    try {
      if (reads) {
        Workloads.awaitReadsOn(ds, "replica", Duration.ofSeconds(30), contender.name());
        Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
      } else {
        Workloads.warmWrites(ds, Contender.POOL_SIZE);
      }
      for (int i = 0; i < 200; i++) work.run(ds, i); // past pgjdbc's prepareThreshold, steady state
      awaitQuiet();
      // Back in steady state: HikariCP validates a connection idle for more than 500 ms (one extra round trip).
      for (int i = 0; i < 50; i++) work.run(ds, i);
      Snapshot before = snapshot();
      for (int i = 0; i < tx; i++) work.run(ds, i);
      Snapshot after = snapshot();
      return row(kase, contender, before, after);
    } finally {
      Contender.close(ds);
    }
  }

  /** A measurement on one held read-only connection. */
  @FunctionalInterface
  interface HeldConnectionWork {
    Row measure(Connection c) throws Exception;
  }

  /**
   * Opens {@code contender}, waits until its reads reach the replica, warms its pools, and runs
   * {@code work} on one held read-only connection.
   */
  private Row onHeldReadOnlyConnection(Contender contender, HeldConnectionWork work)
      throws Exception {
    DataSource ds = contender.open(cluster, primaryWire.hostPort(), replicaWire.hostPort());
    try {
      Workloads.awaitReadsOn(ds, "replica", Duration.ofSeconds(30), contender.name());
      Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
      try (Connection c = ds.getConnection()) {
        c.setReadOnly(true);
        return work.measure(c);
      }
    } finally {
      Contender.close(ds);
    }
  }

  private Row measureAutocommit(Contender contender) throws Exception {
    return onHeldReadOnlyConnection(contender, c -> {
      try (PreparedStatement ps = c.prepareStatement(BenchCluster.READ_SQL)) {
        for (int i = 0; i < 200; i++) Workloads.autocommitRead(ps, 1 + i);
        awaitQuiet();
        for (int i = 0; i < 50; i++) Workloads.autocommitRead(ps, 1 + i);
        Snapshot before = snapshot();
        for (int i = 0; i < tx; i++) Workloads.autocommitRead(ps, 1 + i % BenchCluster.ROWS);
        Snapshot after = snapshot();
        return row("autocommit read, reused PreparedStatement (case 3)", contender, before, after);
      }
    });
  }

  /**
   * Autocommit reads under light traffic: one every 600 ms on a held connection, each with its own
   * PreparedStatement (the JdbcTemplate shape). HikariCP validates a pooled session idle for more
   * than 500 ms before lending it; the limit holds its physical session and lends nothing.
   */
  private Row measureLightTraffic(Contender contender) throws Exception {
    return onHeldReadOnlyConnection(contender, c -> {
      for (int i = 0; i < 20; i++) lightRead(c, 1 + i);
      awaitQuiet();
      Snapshot before = snapshot();
      for (int i = 0; i < LIGHT_READS; i++) {
        Workloads.sleep(600);
        lightRead(c, 1 + i);
      }
      Snapshot after = snapshot();
      return row(LIGHT_TRAFFIC, contender, before, after, LIGHT_READS);
    });
  }

  private static void lightRead(Connection c, int id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BenchCluster.READ_SQL)) {
      Workloads.autocommitRead(ps, id);
    }
  }

  /** Waits until no pool opens sessions any more (background filling would count as the contender's). */
  private void awaitQuiet() {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    Map<String, Long> last = null;
    while (System.nanoTime() < deadline) {
      Map<String, Long> now = new TreeMap<>();
      primaryWire.sessions().forEach((k, v) -> now.put("primary " + k, v));
      replicaWire.sessions().forEach((k, v) -> now.put("replica " + k, v));
      if (now.equals(last)) return;
      last = now;
      Workloads.sleep(700);
    }
  }

  /** Counters on the wire and in pg_stat_statements at one instant. */
  private final class Snapshot {
    final Map<String, Long> primaryWire = RoundTrips.this.primaryWire.roundTrips();
    final Map<String, Long> replicaWire = RoundTrips.this.replicaWire.roundTrips();
    final Map<String, Long> primarySessions = RoundTrips.this.primaryWire.sessions();
    final Map<String, Long> replicaSessions = RoundTrips.this.replicaWire.sessions();
    final Map<String, Long> primaryStatements = statements(cluster.primary());
    final Map<String, Long> replicaStatements = statements(cluster.replica());

    Snapshot() throws SQLException {
    }
  }

  private Snapshot snapshot() throws SQLException {
    return new Snapshot();
  }

  private Map<String, Long> statements(dev.omnium.sandbox.PgNode node) throws SQLException {
    Map<String, Long> m = new TreeMap<>();
    try (Connection c = cluster.control(node); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT query, sum(calls)::bigint FROM pg_stat_statements"
             + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) GROUP BY query")) {
      while (rs.next()) m.put(rs.getString(1).replaceAll("\\s+", " ").trim(), rs.getLong(2));
    }
    return m;
  }

  private static boolean background(String query) {
    String q = query.toLowerCase(Locale.ROOT);
    return q.contains("replica_heartbeat") || q.startsWith("set application_name") || q.contains("pg_stat_statements") || q.contains("pg_stat_activity")
        || q.contains("pg_database") || q.contains("pg_last_wal") || q.contains("pg_current_wal");
  }

  private Row row(String kase, Contender contender, Snapshot before, Snapshot after) {
    return row(kase, contender, before, after, tx);
  }

  private Row row(String kase, Contender contender, Snapshot before, Snapshot after, int tx) {
    Map<String, Long> bg = new TreeMap<>();
    Map<String, Long> bySession = new TreeMap<>();
    long primaryRt =
        roundTrips("primary", delta(before.primaryWire, after.primaryWire), bySession, bg);
    long replicaRt =
        roundTrips("replica", delta(before.replicaWire, after.replicaWire), bySession, bg);
    StringBuilder sessions = new StringBuilder();
    for (Map.Entry<String, Long> e : bySession.entrySet()) {
      if (sessions.length() > 0) sessions.append("<br>");
      sessions.append(fmt(e.getValue() / (double) tx)).append(" × ").append(e.getKey().replace("|", "\\|"));
    }
    Map<String, Long> stmts = new TreeMap<>();
    long total = 0;
    for (Map.Entry<String, Long> e : delta(before.primaryStatements, after.primaryStatements).entrySet()) {
      if (background(e.getKey())) continue;
      stmts.merge("primary: " + e.getKey(), e.getValue(), Long::sum);
      total += e.getValue();
    }
    for (Map.Entry<String, Long> e : delta(before.replicaStatements, after.replicaStatements).entrySet()) {
      if (background(e.getKey())) continue;
      stmts.merge("replica: " + e.getKey(), e.getValue(), Long::sum);
      total += e.getValue();
    }
    StringBuilder detail = new StringBuilder();
    for (Map.Entry<String, Long> e : stmts.entrySet()) {
      if (detail.length() > 0) detail.append("<br>");
      detail.append(fmt(e.getValue() / (double) tx)).append(" × `").append(e.getKey().replace("|", "\\|")).append('`');
    }
    StringBuilder background = new StringBuilder();
    for (Map.Entry<String, Long> e : bg.entrySet()) {
      if (background.length() > 0) background.append(", ");
      background.append(e.getValue()).append(" round trips (").append(e.getKey()).append(')');
    }
    double rt = (primaryRt + replicaRt) / (double) tx;
    long opened = 0;
    for (Map<String, Long> d : List.of(delta(before.primarySessions, after.primarySessions),
        delta(before.replicaSessions, after.replicaSessions))) {
      for (Map.Entry<String, Long> e : d.entrySet()) {
        if (!isWatcher(e.getKey())) opened += e.getValue();
      }
    }
    System.out.printf("[round trips] %-55s %-18s %6s round trips/op (primary %s, replica %s), %s statements/op,"
        + " %d sessions opened%n", kase, contender, fmt(rt), fmt(primaryRt / (double) tx), fmt(replicaRt / (double) tx),
        fmt(total / (double) tx), opened);
    return new Row(kase, contender, rt, primaryRt / (double) tx, replicaRt / (double) tx, total / (double) tx,
        detail.length() == 0 ? "(none)" : detail.toString(),
        sessions.length() == 0 ? "(none)" : sessions.toString(),
        background.length() == 0 ? "none" : background.toString(), opened);
  }

  /** omnium's own background sessions: the replica's lag watcher, the primary's WAL sampler. */
  private static boolean isWatcher(String applicationName) {
    return applicationName.equals(Contender.APP + ":watcher")
        || applicationName.equals(Contender.APP + ":sampler");
  }

  /**
   * One server's round trips in a window by session: the lag watcher's go to {@code background},
   * the others to {@code bySession}; returns the sum of the others.
   */
  private static long roundTrips(String server, Map<String, Long> bySessionInWindow,
      Map<String, Long> bySession, Map<String, Long> background) {
    long sum = 0;
    for (Map.Entry<String, Long> e : bySessionInWindow.entrySet()) {
      if (isWatcher(e.getKey())) {
        background.merge(server + " " + e.getKey(), e.getValue(), Long::sum);
      } else {
        sum += e.getValue();
        bySession.merge(server + " " + e.getKey(), e.getValue(), Long::sum);
      }
    }
    return sum;
  }

  private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
    Map<String, Long> d = new TreeMap<>();
    for (Map.Entry<String, Long> e : after.entrySet()) {
      long v = e.getValue() - before.getOrDefault(e.getKey(), 0L);
      if (v != 0) d.put(e.getKey(), v);
    }
    return d;
  }

  // ---------------------------------------------------------------- case 7

  private String stale() throws Exception {
    StringBuilder b = new StringBuilder();
    b.append("### Stale replica: where reads go, and the fallback cap (case 7)\n\n");
    b.append("Replay paused on the replica (its data falls behind while the heartbeat keeps beating on the primary); ")
        .append("omnium's `maxAge` is ").append(Contender.MAX_AGE).append(". Each contender runs read-only transactions; ")
        .append("for omnium, 16 threads read at once while `pg_stat_activity` on the primary is sampled every 5 ms.\n\n");
    b.append("| contender | read-only transactions ran on | transactions (16 threads) | failed | max `")
        .append(Contender.APP).append(":fallback` sessions on the primary | cap (fallbackPoolSize) |\n");
    b.append("|---|---|---:|---:|---:|---:|\n");
    for (Contender c : READERS) {
      DataSource ds = c.open(cluster, primaryWire.hostPort(), replicaWire.hostPort());
      try {
        Workloads.awaitReadsOn(ds, "replica", Duration.ofSeconds(30), c.name());
        Workloads.warm(ds, Contender.POOL_SIZE, 1);
        cluster.sandbox().pauseReplay(cluster.replica());
        try {
          boolean omnium = c == Contender.OMNIUM_DRIVER || c == Contender.OMNIUM_DATASOURCE;
          String where;
          if (omnium) {
            Workloads.awaitReadsOn(ds, "primary", Duration.ofSeconds(30), c.name() + " (replica paused)");
            where = "primary (fallback pool)";
          } else {
            Workloads.sleep(2000); // well past maxAge: the others have no notion of it
            where = Workloads.readServer(ds) + " (lag ignored)";
          }
          if (omnium) {
            long[] r = concurrentReads(ds, 16, Math.max(50, tx / 16));
            b.append("| ").append(c.label()).append(" | ").append(where).append(" | ").append(r[0]).append(" | ")
                .append(r[1]).append(" | ").append(r[2]).append(" | ").append(Contender.FALLBACK_POOL_SIZE).append(" |\n");
            System.out.printf("[stale] %-18s reads on %s, %d tx, %d failed, max %d fallback sessions (cap %d)%n",
                c, where, r[0], r[1], r[2], Contender.FALLBACK_POOL_SIZE);
            if (r[2] > Contender.FALLBACK_POOL_SIZE) {
              problems.add(c + " held " + r[2] + " fallback sessions on the primary, cap " + Contender.FALLBACK_POOL_SIZE);
            }
            if (r[1] > 0) problems.add(c + ": " + r[1] + " stale-replica reads failed");
          } else {
            b.append("| ").append(c.label()).append(" | ").append(where).append(" | – | – | – | – |\n");
            System.out.printf("[stale] %-18s reads on %s%n", c, where);
          }
        } finally {
          cluster.sandbox().resumeReplay(cluster.replica());
          cluster.sandbox().awaitCaughtUp(cluster.replica());
        }
      } finally {
        Contender.close(ds);
      }
    }
    b.append('\n');
    return b.toString();
  }

  /** Runs {@code perThread} read transactions on each of {@code threads} threads; returns {done, failed, max fallback sessions}. */
  private long[] concurrentReads(DataSource ds, int threads, int perThread) throws Exception {
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicInteger maxSessions = new AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
    Thread sampler = new Thread(() -> {
      try (Connection c = cluster.control(cluster.primary()); Statement st = c.createStatement()) {
        while (running.get()) {
          try (ResultSet rs = st.executeQuery(Harness.FALLBACK_SESSIONS_SQL)) {
            rs.next();
            maxSessions.accumulateAndGet(rs.getInt(1), Math::max);
          }
          Thread.sleep(5);
        }
      } catch (SQLException | InterruptedException e) {
        // sampling ends with the run
      }
    }, "stale-sampler");
    sampler.start();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int seed = t;
      Thread w = new Thread(() -> {
        int[] ids = Workloads.ids(seed, perThread);
        for (int i = 0; i < perThread; i++) {
          try {
            Workloads.readTx(ds, ids[i]);
            done.incrementAndGet();
          } catch (SQLException e) {
            failed.incrementAndGet();
            System.err.println("[stale] read failed: " + e);
          }
        }
      }, "stale-reader-" + t);
      w.start();
      workers.add(w);
    }
    for (Thread w : workers) w.join();
    running.set(false);
    sampler.join();
    return new long[] {done.get(), failed.get(), maxSessions.get()};
  }

  static String fmt(double v) {
    if (Math.abs(v - Math.rint(v)) < 0.0005) return String.valueOf((long) Math.rint(v));
    return String.format(Locale.ROOT, "%.3f", v);
  }
}
