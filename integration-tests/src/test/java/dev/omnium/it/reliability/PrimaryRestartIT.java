package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.jdbc.RouterMXBean;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
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
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Suite 5: the primary restarts (fast shutdown, start on the same port) under a driver-mode writer
 * that keeps one logical connection, a DataSource-mode writer, and readers. Writes fail with a
 * connection-class SQLState (08) during the outage and work again afterwards on the same logical
 * connection and data source, without restarting anything; the driver's heartbeat writer takes its
 * lock again, read routing returns to the replica and the fallback route works; every thread ends.
 */
@ExtendWith(LogScanned.class)
class PrimaryRestartIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(1).heartbeatTableOnly()
      .sql("CREATE TABLE w (id bigserial PRIMARY KEY, who text)").build();

  /** What one writer saw: successes, and failures by SQLState with a sample message each. */
  static final class WriteLog {
    final AtomicLong ok = new AtomicLong();
    final AtomicLong okAfterRestart = new AtomicLong();
    final Map<String, String> failures = Collections.synchronizedMap(new TreeMap<>());
    final Map<String, SQLException> examples = Collections.synchronizedMap(new TreeMap<>());
    final AtomicLong failed = new AtomicLong();
    volatile long lastFailureNanos;
  }

  @Test
  void writesFailWithClass08DuringTheOutageAndRecoverWithoutARestart() throws Exception {
    String app = "restart";
    String url = SANDBOX.url(app, "maxAge=5s&heartbeatInterval=200ms&heartbeatWriter=true&primaryPoolSize=2"
        + "&fallbackPoolSize=2&poolTimeout=1s&connectTimeout=2");
    OmniumDataSource db = new OmniumDataSource(url);
    long[] restartedAt = {Long.MAX_VALUE};
    boolean[] running = {true};
    WriteLog driverWrites = new WriteLog();
    WriteLog dataSourceWrites = new WriteLog();
    List<Thread> threads = new ArrayList<>();
    try {
      try (Connection held = DriverManager.getConnection(url)) {
        // One logical connection, as a long-lived application holds it; a lost primary session
        // closes it (as with pgjdbc), and the application replaces it, as its pool would.
        Connection[] current = {held};
        threads.add(writer("restart-writer-driver", () -> {
          if (current[0].isClosed()) current[0] = DriverManager.getConnection(url);
          return current[0];
        }, false, driverWrites, running, restartedAt));
        threads.add(writer("restart-writer-datasource", db::write, true, dataSourceWrites, running, restartedAt));
        Readers readers = new Readers(app + "-readers", () -> DriverManager.getConnection(url), 2, 1, 50);
        Poll.until(Duration.ofSeconds(15), "the heartbeat leader", () -> db.metrics().isHeartbeatLeader()
            || bean(app).isHeartbeatLeader());
        for (Thread t : threads) t.start();
        readers.start();
        Poll.until(Duration.ofSeconds(15), "writes and replica reads before the restart",
            () -> driverWrites.ok.get() > 5 && dataSourceWrites.ok.get() > 5
                && readers.reads().stream().anyMatch(Readers.Read::replica));

        long before = System.nanoTime();
        SANDBOX.cluster().restartPrimary();
        restartedAt[0] = System.nanoTime();
        long outageMs = TimeUnit.NANOSECONDS.toMillis(restartedAt[0] - before);

        Duration driverBack = Poll.until(Duration.ofSeconds(20), "driver-mode writes once the lost connection is replaced",
            () -> driverWrites.okAfterRestart.get() > 3);
        Duration dataSourceBack = Poll.until(Duration.ofSeconds(20), "DataSource-mode writes",
            () -> dataSourceWrites.okAfterRestart.get() > 3);
        Duration leaderBack = Poll.until(Duration.ofSeconds(20), "the heartbeat writer to hold its lock again",
            () -> bean(app).isHeartbeatLeader() || db.metrics().isHeartbeatLeader());
        long readsBefore = System.nanoTime();
        Poll.until(Duration.ofSeconds(20), "reads routed to the replica again",
            () -> readers.reads().stream().anyMatch(x -> x.replica() && x.begin() > readsBefore));
        // ... and the fallback route on the restarted primary works too.
        SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
        try (OmniumConnection c = db.read(Duration.ofMillis(500))) {
          Duration fallbackBack = Poll.until(Duration.ofSeconds(20), "a fallback read on the restarted primary", () -> {
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT pg_is_in_recovery(), current_setting('application_name')")) {
              rs.next();
              return !rs.getBoolean(1) && rs.getString(2).equals(app + ":fallback");
            }
          });
          new Figures("primary-restart")
              .put("outageMs", outageMs)
              .put("driverWritesOk", driverWrites.ok.get())
              .put("driverWritesFailed", driverWrites.failed.get())
              .put("driverFailureStates", driverWrites.failures.keySet())
              .put("dataSourceWritesOk", dataSourceWrites.ok.get())
              .put("dataSourceWritesFailed", dataSourceWrites.failed.get())
              .put("dataSourceFailureStates", dataSourceWrites.failures.keySet())
              .put("driverWritesBackMs", driverBack.toMillis())
              .put("dataSourceWritesBackMs", dataSourceBack.toMillis())
              .put("heartbeatLeaderBackMs", leaderBack.toMillis())
              .put("fallbackReadAfterPauseMs", fallbackBack.toMillis())
              .put("reads", readers.reads().size())
              .put("readErrors", readers.reads().stream().filter(x -> x.error() != null).count())
              .report();
        } finally {
          SANDBOX.cluster().resumeReplay(SANDBOX.replica(0));
        }
        running[0] = false;
        List<String> stuck = readers.stop(10_000);
        for (Thread t : threads) {
          t.join(10_000);
          if (t.isAlive()) stuck.add(t.getName());
        }
        assertTrue(stuck.isEmpty(), "threads stuck after the restart: " + stuck);
        if (current[0] != held) current[0].close();
        assertTrue(driverWrites.failed.get() > 0 && dataSourceWrites.failed.get() > 0,
            "a writer saw no failure: the outage was not seen");
      }
      Leaks.assertQuiescent(SANDBOX.cluster(), app); // the logical connection is closed now, the data source still open
    } finally {
      running[0] = false;
      db.close();
    }
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
    // Last, so that everything else above is known to hold: the contract's SQLState class.
    List<String> notClass08 = new ArrayList<>();
    SQLException example = null;
    for (WriteLog w : List.of(driverWrites, dataSourceWrites)) {
      for (Map.Entry<String, String> f : w.failures.entrySet()) {
        if (!f.getKey().startsWith("08")) {
          notClass08.add(f.getKey() + " (" + f.getValue() + ")");
          if (example == null) example = w.examples.get(f.getKey());
        }
      }
    }
    if (!notClass08.isEmpty()) {
      throw new AssertionError("writes failed during the outage with SQLStates outside class 08 (connection"
          + " exception): " + notClass08, example);
    }
  }

  static dev.omnium.jdbc.RouterMXBean bean(String app) throws Exception {
    return RouterBean.of(app);
  }

  private Thread writer(String name, Readers.Source source, boolean perWrite, WriteLog log, boolean[] running,
                        long[] restartedAt) {
    Thread t = new Thread(() -> {
      while (running[0]) {
        try {
          Connection c = source.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO w (who) VALUES (?)")) {
            ps.setString(1, name);
            ps.executeUpdate();
            log.ok.incrementAndGet();
            if (System.nanoTime() > restartedAt[0]) log.okAfterRestart.incrementAndGet();
          } finally {
            if (perWrite) c.close();
          }
        } catch (SQLException e) {
          log.failed.incrementAndGet();
          log.lastFailureNanos = System.nanoTime();
          log.failures.putIfAbsent(String.valueOf(e.getSQLState()), e.getClass().getSimpleName() + ": " + e.getMessage());
          log.examples.putIfAbsent(String.valueOf(e.getSQLState()), e);
        }
        Poll.pause(50);
      }
    }, name);
    t.setDaemon(true);
    return t;
  }
}
