package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Reader threads running read-only work through omnium and recording, for every read, when it began
 * and ended, where the server says it ran, and any error. Half-and-half autocommit statements and
 * read-only transactions (the recorded read is the transaction's first statement; its commit is
 * recorded separately, since only first statements are promised to be retried).
 */
public final class Readers {
  /** Opens a logical connection for a reader thread. */
  interface Source {
    Connection open() throws SQLException;
  }

  /** One read as the reader saw it; {@code error} null when it succeeded. */
  record Read(String thread, boolean transaction, long begin, long end, boolean replica, String applicationName,
              String error, Throwable failure) {
    long millis() {
      return TimeUnit.NANOSECONDS.toMillis(end - begin);
    }
  }

  /** Reads return (pg_is_in_recovery(), application_name) first. */
  static final String SQL = "SELECT pg_is_in_recovery(), current_setting('application_name'), pg_sleep(0.02)";

  /**
   * Makes {@code c} read-only and waits (15 s at the most) until its reads run on a replica: the
   * start of every suite that then breaks the replica.
   */
  static void awaitFreshReplica(Connection c) throws Exception {
    c.setReadOnly(true);
    Poll.until(Duration.ofSeconds(15), "a fresh replica", () -> Where.of(c).inRecovery());
  }

  /** A connection of {@code url}, read-only, once its reads run on a replica (see above). */
  public static Connection openFresh(String url) throws Exception {
    Connection c = DriverManager.getConnection(url);
    try {
      awaitFreshReplica(c);
      return c;
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
  }

  /**
   * Begins a transaction on {@code c} whose first statement reads t on the replica (so it holds
   * t's lock there); returns its server process id.
   */
  public static int beginOnReplicaHoldingT(Connection c) throws SQLException {
    c.setAutoCommit(false);
    try (Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT pg_backend_pid(), pg_is_in_recovery(), count(*) FROM t")) {
      rs.next();
      assertTrue(rs.getBoolean(2), "the transaction began on the replica");
      return rs.getInt(1);
    }
  }

  private final List<Read> reads = new ArrayList<>();
  private final List<String> commitErrors = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean running = true;

  Readers(String name, Source source, int autocommit, int transactions, long pauseMillis) {
    for (int i = 0; i < autocommit + transactions; i++) {
      boolean tx = i >= autocommit;
      String threadName = name + "-" + (tx ? "tx" : "auto") + "-" + i;
      Thread t = new Thread(() -> loop(threadName, source, tx, pauseMillis), threadName);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  Readers start() {
    for (Thread t : threads) t.start();
    return this;
  }

  private void loop(String name, Source source, boolean tx, long pauseMillis) {
    try (Connection c = source.open()) {
      c.setReadOnly(true);
      if (tx) c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(SQL)) {
        while (running) {
          long begin = System.nanoTime();
          boolean ok = false;
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            add(new Read(name, tx, begin, System.nanoTime(), rs.getBoolean(1), rs.getString(2), null, null));
            ok = true;
          } catch (SQLException e) {
            add(new Read(name, tx, begin, System.nanoTime(), false, null, e.getSQLState() + " " + e.getMessage(), e));
          }
          if (tx) {
            try {
              if (ok) {
                c.commit();
              } else {
                c.rollback();
              }
            } catch (SQLException e) {
              synchronized (reads) {
                commitErrors.add(e.getSQLState() + " " + e.getMessage());
              }
              try {
                c.rollback();
              } catch (SQLException ignored) {
                // the next transaction starts afresh
              }
            }
          }
          Thread.sleep(pauseMillis);
        }
      }
    } catch (Exception e) {
      add(new Read(name, tx, System.nanoTime(), System.nanoTime(), false, null, "reader died: " + e, e));
    }
  }

  private void add(Read r) {
    synchronized (reads) {
      reads.add(r);
    }
  }

  List<Read> reads() {
    synchronized (reads) {
      return new ArrayList<>(reads);
    }
  }

  List<String> commitErrors() {
    synchronized (reads) {
      return new ArrayList<>(commitErrors);
    }
  }

  /** Stops the readers; returns the names of threads still alive after {@code deadlineMillis}. */
  List<String> stop(long deadlineMillis) throws InterruptedException {
    running = false;
    long end = System.currentTimeMillis() + deadlineMillis;
    List<String> stuck = new ArrayList<>();
    for (Thread t : threads) {
      t.join(Math.max(1, end - System.currentTimeMillis()));
      if (t.isAlive()) stuck.add(t.getName());
    }
    return stuck;
  }
}
