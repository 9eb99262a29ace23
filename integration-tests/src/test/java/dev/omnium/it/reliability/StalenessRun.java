package dev.omnium.it.reliability;

import dev.omnium.jdbc.RouterMXBean;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.Poll;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.JMX;
import javax.management.ObjectName;

/**
 * The bounded staleness checker (suite 1, and the soak). A writer commits increasing ids on the
 * primary through plain pgjdbc and records when each commit returned; readers run read-only work
 * through omnium (autocommit statements, and the first statement of read-only transactions) and
 * record when each read began, the largest id it saw and where it ran (as the server reports it);
 * a fault thread pauses and resumes replay at random, restarts and (optionally) freezes replicas.
 *
 * <p>The check: a read that began at {@code b} and saw largest id {@code m} violates the guarantee
 * when id {@code m + 1} had committed (and its commit had returned to the writer) before
 * {@code b - maxAge}. Ids commit one after another from one connection, so {@code m + 1} is the
 * oldest commit the read missed; its age at {@code b} is the staleness of that read.
 *
 * <p>A control reader reads the first replica directly (plain pgjdbc, no routing) with the same
 * check, to show the checker does see staleness when nothing protects the reads.
 */
final class StalenessRun {
  /** Where a read ran. */
  enum Route { REPLICA, FALLBACK, CONTROL }

  /** One read: when it began and ended (nanoTime), the largest id it saw, where it ran. */
  record Read(long begin, long end, long maxId, Route route, int port, String applicationName) { }

  /** One injected fault. */
  record Fault(String kind, String node, long beginNanos, long endNanos) {
    long millis() {
      return TimeUnit.NANOSECONDS.toMillis(endNanos - beginNanos);
    }
  }

  static final class Options {
    String name;
    PgCluster cluster;
    String url;
    String app;
    Duration maxAge;
    Duration duration;
    int autocommitReaders = 3;
    int transactionReaders = 1;
    long seed = System.nanoTime();
    /**
     * The first faults, in order: "longPause" (replay paused for longer than maxAge, on the first
     * replica, which the control reader reads), "pause", "restart", "freeze". Random ones follow.
     */
    List<String> script = List.of("longPause", "restart");
    /** Whether the random faults after the script include restarts and freezes (else pauses only). */
    boolean randomRestarts;
    boolean randomFreezes;
    /** False: no random fault after the script, the replica stays healthy for the rest of the run. */
    boolean randomFaults = true;
    Duration readerPause = Duration.ofMillis(10);
    Duration writerPause = Duration.ofMillis(5);

    /** A run named for its application name, on {@code cluster}, checking {@code maxAge}. */
    Options(String app, PgCluster cluster, Duration maxAge, Duration duration) {
      this.name = app;
      this.app = app;
      this.cluster = cluster;
      this.maxAge = maxAge;
      this.duration = duration;
    }
  }

  /** What a run produced. */
  static final class Result {
    final List<Read> reads = new ArrayList<>();
    final List<Read> controlReads = new ArrayList<>();
    final List<String> errors = Collections.synchronizedList(new ArrayList<>());
    final List<String> laterErrors = Collections.synchronizedList(new ArrayList<>());
    final List<String> violations = new ArrayList<>();
    final List<Fault> faults = Collections.synchronizedList(new ArrayList<>());
    long lastId;
    long replicaReads;
    long fallbackReads;
    long transactionReads;
    long worstReplicaStalenessNanos;
    long controlViolations;
    long worstControlStalenessNanos;
    long longestReadNanos;
    long retries;
    long acquireFailures;
    List<String> stuckThreads = new ArrayList<>();
    long seed;
    /** When the readers started (nanoTime). */
    long startNanos;

    /**
     * True when no fault was active at {@code nanos} nor ended less than {@code settleNanos}
     * before it, and the run had started at least {@code settleNanos} before.
     */
    boolean healthyAt(long nanos, long settleNanos) {
      if (nanos < startNanos + settleNanos) return false;
      synchronized (faults) {
        for (Fault f : faults) {
          if (nanos >= f.beginNanos() && nanos < f.endNanos() + settleNanos) return false;
        }
      }
      return true;
    }

    long faults(String kind) {
      synchronized (faults) {
        return faults.stream().filter(f -> f.kind().equals(kind)).count();
      }
    }

    long faultMillis(String kind) {
      synchronized (faults) {
        return faults.stream().filter(f -> f.kind().equals(kind)).mapToLong(Fault::millis).sum();
      }
    }

    long longestFaultMillis(String kind) {
      synchronized (faults) {
        return faults.stream().filter(f -> f.kind().equals(kind)).mapToLong(Fault::millis).max().orElse(0);
      }
    }
  }

  private static final String READ_SQL_TEMPLATE = "SELECT coalesce(max(id), 0), pg_is_in_recovery(), inet_server_port(),"
      + " current_setting('application_name') FROM %s";

  private final Options o;
  private final String table;
  private final String readSql;
  private volatile boolean running = true;
  private volatile long lastId;
  private long[] commitNanos;

  StalenessRun(Options options) {
    this.o = options;
    this.table = "stale_ids_" + options.name.replaceAll("[^A-Za-z0-9_]", "_").toLowerCase();
    this.readSql = String.format(READ_SQL_TEMPLATE, table);
  }

  Result run() throws Exception {
    Result r = new Result();
    r.seed = o.seed;
    PgCluster cluster = o.cluster;
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE " + table + " (id bigint PRIMARY KEY)");
    }
    for (PgNode n : cluster.replicas()) cluster.awaitCaughtUp(n);
    // Sized for the writer's pace with a wide margin; the writer stops at the end of the array.
    long seconds = o.duration.toSeconds() + 60;
    commitNanos = new long[(int) Math.min(Integer.MAX_VALUE - 8, seconds * 1000 / Math.max(1, o.writerPause.toMillis()) + 10_000)];

    List<Thread> threads = new ArrayList<>();
    List<List<Read>> perReader = new ArrayList<>();
    AtomicInteger failedThreads = new AtomicInteger();
    Thread writer = thread("stale-writer", () -> write(r), failedThreads, r);
    threads.add(writer);
    for (int i = 0; i < o.autocommitReaders + o.transactionReaders; i++) {
      List<Read> mine = new ArrayList<>();
      perReader.add(mine);
      boolean tx = i >= o.autocommitReaders;
      threads.add(thread("stale-reader-" + i, () -> read(mine, tx, r), failedThreads, r));
    }
    List<Read> control = new ArrayList<>();
    threads.add(thread("stale-control", () -> control(control), failedThreads, r));
    long start = System.nanoTime();
    r.startNanos = start;
    for (Thread t : threads) t.start();
    try {
      injectFaults(r, start + o.duration.toNanos());
    } finally {
      heal();
      running = false;
      for (Thread t : threads) {
        t.join(30_000);
        if (t.isAlive()) r.stuckThreads.add(t.getName());
      }
    }
    if (failedThreads.get() > 0) r.errors.add(failedThreads.get() + " checker thread(s) died, see above");
    try {
      RouterMXBean bean = JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(),
          new ObjectName("dev.omnium:type=Router,name=" + o.app), RouterMXBean.class);
      r.retries = bean.getRetries();
      r.acquireFailures = bean.getReplicaAcquireFailures();
    } catch (RuntimeException e) {
      r.errors.add("router bean of " + o.app + " not readable: " + e);
    }
    for (List<Read> l : perReader) r.reads.addAll(l);
    r.controlReads.addAll(control);
    check(r);
    return r;
  }

  private Thread thread(String name, ThrowingRunnable body, AtomicInteger failed, Result r) {
    Thread t = new Thread(() -> {
      try {
        body.run();
      } catch (Throwable e) {
        failed.incrementAndGet();
        r.errors.add(name + " died: " + e);
        e.printStackTrace();
      }
    }, name);
    t.setDaemon(true);
    return t;
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  private void write(Result r) throws Exception {
    try (Connection c = o.cluster.connect(o.cluster.primary());
         PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?)")) {
      for (int id = 1; running && id < commitNanos.length; id++) {
        ps.setLong(1, id);
        ps.executeUpdate();
        commitNanos[id] = System.nanoTime();
        lastId = id;
        Thread.sleep(o.writerPause.toMillis());
      }
    } finally {
      r.lastId = lastId;
    }
  }

  private void read(List<Read> out, boolean transactions, Result r) throws Exception {
    try (Connection c = DriverManager.getConnection(o.url)) {
      c.setReadOnly(true);
      if (transactions) c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(readSql)) {
        while (running) {
          long begin = System.nanoTime();
          Read read = null;
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            boolean replica = rs.getBoolean(2);
            read = new Read(begin, System.nanoTime(), rs.getLong(1), replica ? Route.REPLICA : Route.FALLBACK,
                rs.getInt(3), rs.getString(4));
            out.add(read);
          } catch (SQLException e) {
            r.errors.add((transactions ? "first statement of a read-only transaction" : "read-only autocommit statement")
                + " failed: " + e.getSQLState() + " " + e.getMessage());
            if (transactions) rollbackQuietly(c);
          }
          if (transactions && read != null) {
            try (Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery(), inet_server_port()")) {
              rs.next();
              if (rs.getBoolean(1) != (read.route() == Route.REPLICA) || rs.getInt(2) != read.port()) {
                r.errors.add("a read-only transaction moved between statements: began on " + read.port()
                    + ", continued on " + rs.getInt(2));
              }
              c.commit();
            } catch (SQLException e) {
              // Later statements may surface a lost replica (docs/routing-contract.md,
              // rule 5): allowed, counted.
              r.laterErrors.add(e.getSQLState() + " " + e.getMessage());
              rollbackQuietly(c);
            }
          }
          Thread.sleep(o.readerPause.toMillis());
        }
      }
    }
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException ignored) {
      // the next transaction starts afresh
    }
  }

  private void control(List<Read> out) throws Exception {
    PgNode replica = o.cluster.replica(0);
    Properties p = new Properties();
    p.setProperty("connectTimeout", "2");
    p.setProperty("socketTimeout", "5");
    p.setProperty("loginTimeout", "5");
    p.setProperty("ApplicationName", "stale-control");
    Connection c = null;
    while (running) {
      try {
        if (c == null) c = o.cluster.connect(replica, p);
        long begin = System.nanoTime();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(readSql)) {
          rs.next();
          out.add(new Read(begin, System.nanoTime(), rs.getLong(1), Route.CONTROL, rs.getInt(3), rs.getString(4)));
        }
      } catch (SQLException e) {
        if (c != null) {
          try {
            c.close();
          } catch (SQLException ignored) {
            // reconnect
          }
        }
        c = null;
      }
      Thread.sleep(20);
    }
    if (c != null) c.close();
  }

  // ---------------------------------------------------------------- faults

  /** Pauses replay on {@code node} for {@code millis} (0.5 s at least): one "pause" fault. */
  private void pauseReplay(Result r, PgNode node, long millis, long begin) {
    o.cluster.pauseReplay(node);
    Poll.pause(Math.max(500, millis));
    o.cluster.resumeReplay(node);
    r.faults.add(new Fault("pause", node.name(), begin, System.nanoTime()));
  }

  private void injectFaults(Result r, long endNanos) {
    Random rnd = new Random(o.seed);
    List<PgNode> replicas = o.cluster.replicas();
    int n = 0;
    long maxAgeMs = o.maxAge.toMillis();
    while (true) {
      long left = TimeUnit.NANOSECONDS.toMillis(endNanos - System.nanoTime());
      if (left < 1500) break;
      Poll.pause(Math.min(left - 1000, 500 + rnd.nextInt(1500))); // healthy for 0.5-2 s
      left = TimeUnit.NANOSECONDS.toMillis(endNanos - System.nanoTime());
      if (left < 1000) break;
      String kind;
      if (n < o.script.size()) {
        kind = o.script.get(n);
      } else if (!o.randomFaults) {
        Poll.pause(left - 500);
        break;
      } else {
        int dice = rnd.nextInt(100);
        if (o.randomRestarts && dice < 20) {
          kind = "restart";
        } else if (o.randomFreezes && dice >= 20 && dice < 40) {
          kind = "freeze";
        } else {
          kind = "pause";
        }
      }
      // The long pause hits the first replica, the one the control reader reads.
      PgNode node = kind.equals("longPause") ? replicas.get(0) : replicas.get(rnd.nextInt(replicas.size()));
      n++;
      long begin = System.nanoTime();
      switch (kind) {
        case "longPause": {
          // Outlasts maxAge (as far as 8 s and the time left allow), so the control reader sees stale data.
          long lo = Math.min(8000, maxAgeMs + 1500);
          pauseReplay(r, node, Math.min(left - 200, lo + rnd.nextInt((int) Math.max(1, 8000 - lo + 1))),
              begin);
          break;
        }
        case "pause":
          pauseReplay(r, node, Math.min(left - 200, 500 + rnd.nextInt(7501)), begin); // 0.5-8 s
          break;
        case "restart": {
          o.cluster.stop(node, true);
          Poll.pause(300 + rnd.nextInt(1200));
          o.cluster.start(node);
          r.faults.add(new Fault("restart", node.name(), begin, System.nanoTime()));
          break;
        }
        case "freeze": {
          o.cluster.freeze(node);
          Poll.pause(Math.min(left - 200, 500 + rnd.nextInt(2501))); // 0.5-3 s
          o.cluster.thaw(node);
          r.faults.add(new Fault("freeze", node.name(), begin, System.nanoTime()));
          break;
        }
        default:
          throw new IllegalStateException(kind);
      }
    }
  }

  /** Whatever state the faults left: every replica running, thawed and replaying. */
  private void heal() {
    for (PgNode node : o.cluster.replicas()) {
      try {
        o.cluster.thaw(node);
      } catch (RuntimeException ignored) {
        // not frozen
      }
      o.cluster.start(node);
      o.cluster.resumeReplay(node);
    }
  }

  // ---------------------------------------------------------------- the check

  private void check(Result r) {
    long maxAge = o.maxAge.toNanos();
    long last = r.lastId;
    for (Read read : r.reads) {
      if (read.route() == Route.REPLICA) {
        r.replicaReads++;
        if (!read.applicationName().equals(o.app + ":replica")) {
          r.errors.add("a replica read ran in session " + read.applicationName());
        }
      } else {
        r.fallbackReads++;
        if (!read.applicationName().equals(o.app + ":fallback")) {
          r.errors.add("a primary read ran in session " + read.applicationName());
        }
      }
      r.longestReadNanos = Math.max(r.longestReadNanos, read.end() - read.begin());
      long stale = staleness(read, last);
      if (read.route() == Route.REPLICA) r.worstReplicaStalenessNanos = Math.max(r.worstReplicaStalenessNanos, stale);
      if (stale > maxAge) {
        if (r.violations.size() < 20) {
          r.violations.add(String.format("read on %s (%s) began %d ms into the run, saw id %d, but id %d had committed %d ms"
                  + " before it began (maxAge %d ms)", read.route(), read.applicationName(),
              TimeUnit.NANOSECONDS.toMillis(read.begin() - firstCommit()), read.maxId(), read.maxId() + 1,
              TimeUnit.NANOSECONDS.toMillis(stale), o.maxAge.toMillis()));
        } else {
          r.violations.add("...");
        }
      }
      if (read.maxId() > last) r.errors.add("a read saw id " + read.maxId() + " that the writer never committed");
    }
    for (Read read : r.controlReads) {
      long stale = staleness(read, last);
      r.worstControlStalenessNanos = Math.max(r.worstControlStalenessNanos, stale);
      if (stale > maxAge) r.controlViolations++;
    }
  }

  private long firstCommit() {
    return commitNanos.length > 1 ? commitNanos[1] : 0;
  }

  /** How old, when the read began, was the oldest commit it did not see (0: it missed none). */
  private long staleness(Read read, long last) {
    long next = read.maxId() + 1;
    if (next > last) return 0;
    long committed = commitNanos[(int) next];
    return Math.max(0, read.begin() - committed);
  }
}
