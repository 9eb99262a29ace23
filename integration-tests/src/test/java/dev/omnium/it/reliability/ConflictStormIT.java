package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.jdbc.RouterMXBean;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.JMX;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Suite 4, a recovery-conflict storm: TRUNCATE, DELETE + VACUUM and DROP TABLE / CREATE TABLE on the
 * primary, over and over, while replica reads run with max_standby_streaming_delay = 100 ms. Every
 * retryable read (autocommit statements, first statements of read-only transactions) succeeds;
 * sessions the replica terminates (FATAL, idle in transaction) are evicted, never handed out again;
 * retries are counted in JMX, and the replica's log shows the conflicts the driver absorbed.
 */
@ExtendWith(LogScanned.class)
class ConflictStormIT {
  static final Duration STORM = Duration.ofSeconds(12);
  /** Reads t (truncated, vacuumed) and d (dropped and re-created; missing is fine) and hold their locks a while. */
  static final String READ = "SELECT storm_read(), pg_is_in_recovery(), pg_backend_pid(), current_setting('application_name')";

  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(1)
      .sql("CREATE TABLE t (v int)", "INSERT INTO t SELECT generate_series(1, 2000)",
          "CREATE TABLE d (v int)",
          "CREATE FUNCTION storm_read() RETURNS bigint LANGUAGE plpgsql AS $$\n"
          + "DECLARE n bigint; m bigint := 0;\n"
          + "BEGIN\n"
          + "  SELECT count(*) INTO n FROM t;\n"
          + "  BEGIN\n"
          + "    EXECUTE 'SELECT count(*) FROM d' INTO m;\n"
          + "  EXCEPTION WHEN undefined_table THEN m := 0;\n"
          + "  END;\n"
          + "  PERFORM pg_sleep(0.15);\n"
          + "  RETURN n + m;\n"
          + "END $$").build();

  @BeforeAll
  static void up() {
    SANDBOX.cluster().setConflictDelay(SANDBOX.replica(0), Duration.ofMillis(100));
  }

  @Test
  void everyRetryableReadSurvivesTheStorm() throws Exception {
    String app = "storm";
    String url = SANDBOX.url(app, "maxAge=5s&heartbeatInterval=100ms&replicaPoolSize=4&fallbackPoolSize=4");
    long logStart = Files.size(SANDBOX.replica(0).logFile());
    try (Connection probe = Readers.openFresh(url)) {
    }
    List<String> retryableFailures = Collections.synchronizedList(new ArrayList<>());
    List<String> laterFailures = Collections.synchronizedList(new ArrayList<>());
    List<String> notEvicted = Collections.synchronizedList(new ArrayList<>());
    List<String> stormErrors = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger reads = new AtomicInteger();
    AtomicInteger replicaReads = new AtomicInteger();
    AtomicInteger transactions = new AtomicInteger();
    AtomicInteger fatalSessions = new AtomicInteger();
    AtomicInteger stormActions = new AtomicInteger();
    long end = System.nanoTime() + STORM.toNanos();

    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      threads.add(new Thread(() -> {
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
          c.setReadOnly(true);
          while (System.nanoTime() < end) {
            try (ResultSet rs = st.executeQuery(READ)) {
              rs.next();
              reads.incrementAndGet();
              if (rs.getBoolean(2)) replicaReads.incrementAndGet();
            } catch (SQLException e) {
              retryableFailures.add("autocommit: " + e.getSQLState() + " " + e.getMessage());
            }
          }
        } catch (Exception e) {
          retryableFailures.add("reader died: " + e);
        }
      }, "storm-auto-" + i));
    }
    for (int i = 0; i < 2; i++) {
      threads.add(new Thread(() -> {
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
          c.setReadOnly(true);
          c.setAutoCommit(false);
          int killedPid = 0;
          while (System.nanoTime() < end) {
            int pid;
            boolean replica;
            try (ResultSet rs = st.executeQuery(READ)) {
              rs.next();
              reads.incrementAndGet();
              transactions.incrementAndGet();
              replica = rs.getBoolean(2);
              pid = rs.getInt(3);
              if (replica) replicaReads.incrementAndGet();
            } catch (SQLException e) {
              retryableFailures.add("first statement: " + e.getSQLState() + " " + e.getMessage());
              c.rollback();
              continue;
            }
            if (replica && pid == killedPid) {
              notEvicted.add("session " + pid + " was terminated by the replica and handed out again");
            }
            killedPid = 0;
            try {
              Thread.sleep(150); // idle in transaction, holding t's lock: the replica terminates the session
              try (ResultSet rs = st.executeQuery("SELECT count(*) FROM t")) {
                rs.next();
              }
              c.commit();
            } catch (SQLException e) {
              laterFailures.add(e.getSQLState() + " " + e.getMessage());
              if (replica && isTermination(e)) {
                fatalSessions.incrementAndGet();
                killedPid = pid;
              }
              c.rollback();
            }
          }
        } catch (Exception e) {
          retryableFailures.add("reader died: " + e);
        }
      }, "storm-tx-" + i));
    }
    Thread storm = new Thread(() -> {
      Random rnd = new Random();
      try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement()) {
        while (System.nanoTime() < end) {
          try {
            switch (rnd.nextInt(4)) {
              case 0:
                st.execute("TRUNCATE t");
                st.execute("INSERT INTO t SELECT generate_series(1, 2000)");
                break;
              case 1:
                st.execute("DELETE FROM t WHERE v % 2 = 0");
                st.execute("VACUUM t");
                st.execute("INSERT INTO t SELECT generate_series(1, 1000) * 2");
                break;
              case 2:
                st.execute("DROP TABLE IF EXISTS d");
                break;
              default:
                st.execute("CREATE TABLE IF NOT EXISTS d (v int)");
                st.execute("INSERT INTO d SELECT generate_series(1, 100)");
            }
            stormActions.incrementAndGet();
          } catch (SQLException e) {
            stormErrors.add(e.getSQLState() + " " + e.getMessage());
          }
          Thread.sleep(100 + rnd.nextInt(200));
        }
      } catch (Exception e) {
        stormErrors.add("storm died: " + e);
      }
    }, "storm-primary");
    threads.add(storm);
    for (Thread t : threads) t.start();
    List<String> stuck = new ArrayList<>();
    for (Thread t : threads) {
      t.join(STORM.toMillis() + 30_000);
      if (t.isAlive()) stuck.add(t.getName());
    }
    RouterMXBean bean = RouterBean.of(app);
    long retries = bean.getRetries();
    String log = Files.readString(SANDBOX.replica(0).logFile());
    log = log.substring((int) Math.min(logStart, log.length()));
    long cancelled = count(log, app + ":replica ERROR:  canceling statement due to conflict with recovery");
    long terminated = count(log, app + ":replica FATAL:  terminating connection due to conflict with recovery");
    new Figures("conflict-storm")
        .put("seconds", STORM.toSeconds())
        .put("stormActions", stormActions.get())
        .put("reads", reads.get())
        .put("replicaReads", replicaReads.get())
        .put("transactions", transactions.get())
        .put("retries", retries)
        .put("replicaLogCancels", cancelled)
        .put("replicaLogTerminations", terminated)
        .put("fatalSeenByReaders", fatalSessions.get())
        .put("laterStatementErrors", laterFailures.size())
        .put("retryableFailures", retryableFailures.size())
        .put("firstStatementConflicts", cancelled + terminated
            - laterFailures.stream().filter(f -> f.startsWith("40001")).count())
        .put("notEvicted", notEvicted.size())
        .report();

    assertTrue(stuck.isEmpty(), "threads stuck: " + stuck);
    assertTrue(stormErrors.isEmpty(), "the storm itself failed: " + stormErrors);
    assertTrue(retryableFailures.isEmpty(), retryableFailures.size() + " retryable reads failed: "
        + retryableFailures.subList(0, Math.min(5, retryableFailures.size())));
    assertTrue(cancelled + terminated > 0, "the replica reported no conflict: the storm proves nothing");
    assertTrue(retries > 0, "no retry counted in JMX although the replica cancelled " + cancelled + " statements");
    // Every retry must match a conflict the replica reported on a first or autocommit statement: a cancel
    // (ERROR), or a termination (FATAL: PostgreSQL terminates instead of cancelling when the conflict hits
    // a subtransaction, here storm_read's EXCEPTION block). Conflicts later in a transaction reach the
    // caller and are not retried. A terminated session handed out again would fail its next first statement
    // and add a retry the replica never caused.
    long laterConflicts = laterFailures.stream().filter(f -> f.startsWith("40001")).count();
    long firstStatementConflicts = cancelled + terminated - laterConflicts;
    assertTrue(retries <= firstStatementConflicts, "JMX counted " + retries + " retries but the replica cancelled or"
        + " terminated only " + firstStatementConflicts + " first or autocommit statements (" + cancelled + " cancels + "
        + terminated + " terminations - " + laterConflicts + " later in a transaction): a dead session was handed out"
        + " again");
    assertTrue(replicaReads.get() > 0, "no read ran on the replica");
    assertTrue(fatalSessions.get() > 0, "no FATAL conflict reached an idle transaction: eviction untested");
    assertTrue(notEvicted.isEmpty(), String.join("; ", notEvicted));
    for (String f : laterFailures) {
      String state = f.substring(0, f.indexOf(' '));
      assertTrue(state.equals("40001") || state.startsWith("08") || state.startsWith("57P"),
          "a later statement failed with something else than a conflict or a lost session: " + f);
    }
    // No terminated session lingers in the replica pool: the server's count matches what the pool holds.
    Leaks.assertQuiescent(SANDBOX.cluster(), app);
    Map<String, Leaks.Pool> pools = Leaks.pools(app);
    int pooled = pools.values().stream().filter(p -> p.name().startsWith(app + "-replica-")).mapToInt(Leaks.Pool::total).sum();
    Poll.until(Duration.ofSeconds(10), "the replica pool's connections to all be live sessions",
        () -> Leaks.sessions(SANDBOX.cluster(), SANDBOX.replica(0), app).getOrDefault("replica idle", 0)
            == Leaks.pools(app).values().stream().filter(p -> p.name().startsWith(app + "-replica-"))
            .mapToInt(Leaks.Pool::total).sum());
    assertTrue(pooled > 0, "no replica pool: " + pools);
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
  }

  /**
   * The deterministic case the storm hits by chance: a session terminated while idle in a read-only
   * transaction whose application next calls commit() or rollback() (not another statement). The
   * call fails, as it must; the dead session must then be evicted, not returned to the replica pool
   * (pool size 1 here), or the next transaction's first statement would be handed the corpse (and
   * silently retried on the primary).
   */
  @Test
  void aFatalConflictSeenAtCommitEvictsTheSession() throws Exception {
    for (String end : new String[] {"commit", "rollback"}) {
      String app = "stormend" + end;
      String url = SANDBOX.url(app, "maxAge=5s&heartbeatInterval=100ms&replicaPoolSize=1");
      try (Connection c = Readers.openFresh(url)) {
        RouterMXBean bean = RouterBean.of(app);
        int pid = Readers.beginOnReplicaHoldingT(c);
        try (Connection p = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = p.createStatement()) {
          st.execute("TRUNCATE t");
          st.execute("INSERT INTO t SELECT generate_series(1, 2000)");
        }
        Poll.until(Duration.ofSeconds(10), "the replica to terminate session " + pid,
            () -> "0".equals(SANDBOX.queryOne(SANDBOX.replica(0),
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ?", pid)));
        long retriesBefore = bean.getRetries();
        String ended;
        try {
          if (end.equals("commit")) {
            c.commit();
          } else {
            c.rollback();
          }
          ended = "returned normally";
        } catch (SQLException e) {
          ended = "failed with " + e.getSQLState() + " " + e.getMessage().lines().findFirst().orElse("");
        }
        int nextPid;
        boolean nextOnReplica;
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT pg_backend_pid(), pg_is_in_recovery()")) {
          rs.next();
          nextPid = rs.getInt(1);
          nextOnReplica = rs.getBoolean(2);
        }
        c.commit();
        long retried = bean.getRetries() - retriesBefore;
        System.out.println("stormend " + end + ": " + ended + "; next transaction on "
            + (nextOnReplica ? "the replica" : "the primary") + " pid " + nextPid + ", retries " + retried);
        assertTrue(retried == 0 && nextOnReplica && nextPid != pid, "after " + end + "() on a transaction whose"
            + " replica session was terminated (" + ended + "), the next transaction's first statement "
            + (retried > 0 ? "was retried on the primary (" + retried + " retry): it had been handed the dead session"
                : "ran on " + (nextOnReplica ? "replica pid " + nextPid : "the primary")));
      }
      Leaks.assertQuiescent(SANDBOX.cluster(), app);
      OmniumDriver.shutdown();
      Leaks.assertGone(SANDBOX.cluster(), app);
    }
  }

  private static boolean isTermination(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String m = String.valueOf(t.getMessage());
      if (m.contains("terminating connection due to conflict with recovery")) return true;
      if (t instanceof SQLException && ((SQLException) t).getSQLState() != null
          && ((SQLException) t).getSQLState().startsWith("08")) {
        return true;
      }
    }
    return false;
  }

  private static long count(String text, String what) {
    long n = 0;
    for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) n++;
    return n;
  }
}
