package dev.omnium.sandbox;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.RouterMXBean;
import dev.omnium.sandbox.testkit.Poll;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The live demo: a sandbox primary + replica and a mixed workload through {@code jdbc:omnium:},
 * walked through scripted phases (healthy, replay paused, resumed, a recovery conflict, the
 * replica killed and restarted), printing lag, read-only units of work per second per route,
 * fallback connections
 * in use and retries every second, then a summary table.
 */
public final class Demo {
  /** What the demo counted; the summary the tests check. */
  public record Summary(long replicaReads, long fallbackReads, long primaryReads,
      long primaryStatements, long retries,
                        int maxFallbackInUse, int fallbackPoolSize, long readErrors,
                            long writeErrors) {
  }

  private static final int READERS = 4;
  private static final int WRITERS = 2;

  private final Duration phase;
  private final PrintStream out;
  private final boolean terminal;
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicLong readErrors = new AtomicLong();
  private final AtomicLong writeErrors = new AtomicLong();
  /** Reads that need exact data, run on the primary on purpose (the seed's delivery worker). */
  private final AtomicLong primaryReads = new AtomicLong();
  private final AtomicReference<String> lastError = new AtomicReference<>();
  private volatile boolean conflictPhase;
  private int maxFallbackInUse;

  /**
   * @param phase length of each scripted phase
   * @param out where the progress lines go
   * @param terminal refresh one line in place (a terminal) or print plain lines (a pipe, a log)
   */
  public Demo(Duration phase, PrintStream out, boolean terminal) {
    this.phase = phase;
    this.out = out;
    this.terminal = terminal;
  }

  /** Starts its own cluster, runs every phase, stops the cluster, returns the totals. */
  public Summary run() throws Exception {
    out.println("omnium demo: starting a PostgreSQL primary + streaming replica (sandbox)…");
    try (PgCluster cluster = PgCluster.builder().replicas(1).start()) {
      PgNode replica = cluster.replica(0);
      try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE events (id bigserial PRIMARY KEY, at timestamptz NOT NULL"
            + " DEFAULT now(), payload text)");
        st.execute("CREATE TABLE hot (v int)");
        st.execute("INSERT INTO hot SELECT generate_series(1, 1000)");
      }
      String url = "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
          + cluster.database()
          + "?replica=" + replica.hostPort() + "&user=" + cluster.user()
          + (cluster.password() == null ? "" : "&password=" + cluster.password())
          + "&applicationName=demo&heartbeatWriter=true&heartbeatInterval=200ms&maxAge=1s"
          + "&fallbackPoolSize=2&replicaPoolSize=4&primaryPoolSize=4&poolTimeout=5s"
          + "&replicaAcquireTimeout=500ms";
      out.println("URL: " + url.replaceAll("password=[^&]*", "password=***"));
      try (OmniumDataSource db = new OmniumDataSource(url)) {
        RouterMXBean m = db.metrics();
        List<Thread> threads = startWorkload(db);
        try {
          awaitReplicaReads(db);
          phase("1/5 healthy: read-only transactions run on the replica", m, () -> { });
          phase("2/5 replay paused on the replica: lag climbs past maxAge=1s, reads move to the"
              + " capped fallback pool",
              m, () -> cluster.pauseReplay(replica));
          phase("3/5 replay resumed: the replica catches up, reads return to it", m, () -> {
            cluster.resumeReplay(replica);
          });
          phase("4/5 recovery conflict: TRUNCATE on the primary cancels replica reads (40001),"
              + " retried on the primary",
              m, () -> {
                cluster.setConflictDelay(replica, Duration.ofMillis(100));
                conflictPhase = true;
                startTruncater(cluster);
              });
          conflictPhase = false;
          phase("5/5 replica killed (immediate stop), then restarted half-way", m, () -> {
            cluster.stop(replica, true);
            Thread restarter = new Thread(() -> {
              Poll.pause(phase.toMillis() / 2);
              cluster.start(replica);
            }, "demo-restart");
            restarter.setDaemon(true);
            restarter.start();
          });
        } finally {
          running.set(false);
          for (Thread t : threads) t.join(10_000);
        }
        Summary s = new Summary(m.getReplicaRoutes(), m.getFallbackRoutes(), primaryReads.get(),
            m.getPrimaryStatements(),
            m.getRetries(), maxFallbackInUse, m.getFallbackPoolSize(), readErrors.get(),
                writeErrors.get());
        printSummary(s);
        return s;
      }
    }
  }

  private interface Action {
    void run() throws Exception;
  }

  private void phase(String caption, RouterMXBean m, Action start) throws Exception {
    out.println();
    out.println("== " + caption);
    start.run();
    long replica = m.getReplicaRoutes();
    long fallback = m.getFallbackRoutes();
    long primary = primaryReads.get();
    long seconds = Math.max(1, phase.toSeconds());
    for (long i = 0; i < seconds; i++) {
      Poll.pause(1000);
      long r = m.getReplicaRoutes();
      long f = m.getFallbackRoutes();
      long p = primaryReads.get();
      int inUse = m.getFallbackActive();
      maxFallbackInUse = Math.max(maxFallbackInUse, inUse);
      String line =
          String.format("lag %-9s reads/s: replica %5d  fallback %5d  primary %4d   fallback in"
          + " use %d/%d   retries %d%s",
          lag(m), r - replica, f - fallback, p - primary, inUse, m.getFallbackPoolSize(),
              m.getRetries(),
          readErrors.get() + writeErrors.get() == 0 ? "" : "   errors " + (readErrors.get()
              + writeErrors.get()));
      if (terminal) {
        out.print("\r\033[2K" + line);
        out.flush();
      } else {
        out.println(line);
      }
      replica = r;
      fallback = f;
      primary = p;
    }
    if (terminal) out.println();
  }

  private static String lag(RouterMXBean m) {
    Map<String, Long> lags = m.getEffectiveLagMillis();
    long lag = lags.isEmpty() ? -1 : lags.values().iterator().next();
    return lag < 0 ? "unknown" : lag + " ms";
  }

  private List<Thread> startWorkload(OmniumDataSource db) {
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      threads.add(daemon("demo-writer-" + w, () -> {
        while (running.get()) {
          try (Connection c = db.write(); PreparedStatement ps =
              c.prepareStatement("INSERT INTO events (payload) VALUES (?)")) {
            ps.setString(1, "event");
            ps.executeUpdate();
          } catch (SQLException e) {
            writeErrors.incrementAndGet(); // expected only if the primary itself fails
            lastError.set(e.getMessage());
          }
          Poll.pause(20);
        }
      }));
    }
    threads.add(daemon("demo-exact-reader", () -> {
      while (running.get()) {
        try (Connection c = db.write(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT max(id) FROM events")) {
          rs.next();
          primaryReads.incrementAndGet();
        } catch (SQLException e) {
          readErrors.incrementAndGet();
          lastError.set(e.getSQLState() + " " + e.getMessage());
        }
        Poll.pause(50);
      }
    }));
    for (int r = 0; r < READERS; r++) {
      final int reader = r;
      threads.add(daemon("demo-reader-" + r, () -> {
        while (running.get()) {
          try (OmniumConnection c = db.read()) {
            String sql = conflictPhase && reader == 0
                ? "SELECT count(*) FROM hot, pg_sleep(0.3)" // holds hot's lock on the replica
                : "SELECT count(*), max(id) FROM events";
            // one statement per read-only unit of work: a replica failure at it is always retried
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
              rs.next();
            }
          } catch (SQLException e) {
            readErrors.incrementAndGet();
            lastError.set(e.getSQLState() + " " + e.getMessage());
          }
          Poll.pause(5);
        }
      }));
    }
    return threads;
  }

  private void startTruncater(PgCluster cluster) {
    daemon("demo-truncate", () -> {
      long end = System.nanoTime() + phase.toNanos();
      while (running.get() && conflictPhase && System.nanoTime() < end) {
        try (Connection c = cluster.connect(cluster.primary()); Statement st =
            c.createStatement()) {
          st.execute("TRUNCATE hot");
          st.execute("INSERT INTO hot SELECT generate_series(1, 1000)");
        } catch (SQLException e) {
          lastError.set(e.getMessage());
        }
        Poll.pause(300);
      }
    });
  }

  private static void awaitReplicaReads(OmniumDataSource db) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      try (OmniumConnection c = db.read(); Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
        if (rs.next() && rs.getBoolean(1)) return;
      }
      Poll.pause(100);
    }
    throw new IllegalStateException("the replica never became fresh: is the heartbeat writer"
        + " running?");
  }

  private void printSummary(Summary s) {
    out.println();
    out.println("== summary");
    out.println(String.format("  %-36s %10d", "read transactions on the replica",
        s.replicaReads()));
    out.println(String.format("  %-36s %10d", "read transactions on the fallback",
        s.fallbackReads()));
    out.println(String.format("  %-36s %10d", "exact reads on the primary", s.primaryReads()));
    out.println(String.format("  %-36s %10d", "statements on the primary (all)",
        s.primaryStatements()));
    out.println(String.format("  %-36s %10d", "reads retried after 40001 / loss", s.retries()));
    out.println(String.format("  %-36s %7d/%d", "most fallback connections in use",
        s.maxFallbackInUse(), s.fallbackPoolSize()));
    out.println(String.format("  %-36s %10d", "read errors seen by the application",
        s.readErrors()));
    out.println(String.format("  %-36s %10d", "write errors seen by the application",
        s.writeErrors()));
    if (lastError.get() != null && s.readErrors() + s.writeErrors() > 0) {
      out.println("  last error: " + lastError.get());
    }
  }

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.start();
    return t;
  }
}
