package dev.omnium.it.switchover;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The application of issue 15: one writer committing a transaction every 10 ms and six readers
 * running Spring-shaped read-only transactions every 5 ms, all borrowing from the application's
 * own connection source(s). Every operation is recorded with what the server said about itself
 * ({@code pg_is_in_recovery()}, {@code inet_server_port()}, {@code application_name}).
 */
final class Workload {
  /** Borrows a connection from the application's pool (or opens one). */
  interface Source {
    Connection get() throws SQLException;
  }

  /**
   * One unit of work as the application saw it.
   *
   * @param waitNanos time spent borrowing the connection from the application's source
   * @param answered when the statement's answer reached the application (0 when it failed)
   * @param error SQLState and message, null when it succeeded
   */
  record Op(boolean write, long begin, long end, long waitNanos, long answered,
            boolean inRecovery, int port, String applicationName, String sqlState,
            String error) {
    boolean ok() {
      return error == null;
    }
  }

  /** Prefix of the error of a read-only transaction whose read succeeded and commit failed. */
  static final String AT_COMMIT = "at commit: ";
  static final String READ_SQL = "SELECT pg_is_in_recovery(), inet_server_port(),"
      + " current_setting('application_name'), (SELECT count(*) FROM sw_probe)";
  static final String WRITE_SQL = "INSERT INTO sw_writes (app) VALUES (?)"
      + " RETURNING pg_is_in_recovery(), inet_server_port()";

  private final String name;
  private final List<Op> ops = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean running = true;
  private int traced;

  Workload(String name, Source writes, Source reads, int readers) {
    this.name = name;
    threads.add(thread(name + "-writer", () -> loop(true, writes, 10)));
    for (int i = 0; i < readers; i++) {
      threads.add(thread(name + "-reader-" + i, () -> loop(false, reads, 5)));
    }
  }

  private static Thread thread(String name, Runnable r) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  String name() {
    return name;
  }

  Workload start() {
    for (Thread t : threads) t.start();
    return this;
  }

  /** Stops every thread; returns the names of those still running after {@code millis}. */
  List<String> stop(long millis) throws InterruptedException {
    running = false;
    List<String> stuck = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    for (Thread t : threads) {
      t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      if (t.isAlive()) stuck.add(t.getName());
    }
    return stuck;
  }

  List<Op> ops() {
    synchronized (ops) {
      return new ArrayList<>(ops);
    }
  }

  private void add(Op op) {
    synchronized (ops) {
      ops.add(op);
    }
  }

  private void loop(boolean write, Source source, long pauseMillis) {
    while (running) {
      long begin = System.nanoTime();
      long borrowed = begin;
      // The pool resets autocommit and read-only when the connection goes back.
      try (Connection c = source.get()) {
        borrowed = System.nanoTime();
        if (write) {
          c.setAutoCommit(false);
          try (PreparedStatement ps = c.prepareStatement(WRITE_SQL)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
              long answered = System.nanoTime();
              rs.next();
              boolean rec = rs.getBoolean(1);
              int port = rs.getInt(2);
              c.commit();
              add(new Op(true, begin, System.nanoTime(), borrowed - begin, answered, rec, port,
                  null, null, null));
            }
          } catch (SQLException e) {
            rollbackQuietly(c);
            throw e;
          }
        } else {
          // What Spring's @Transactional(readOnly = true) does on a pooled connection.
          c.setReadOnly(true);
          c.setAutoCommit(false);
          try (PreparedStatement ps = c.prepareStatement(READ_SQL);
               ResultSet rs = ps.executeQuery()) {
            long answered = System.nanoTime();
            rs.next();
            boolean rec = rs.getBoolean(1);
            int port = rs.getInt(2);
            String app = rs.getString(3);
            try {
              c.commit();
            } catch (SQLException e) {
              // The result already reached the application: its session died before the commit.
              add(new Op(false, begin, System.nanoTime(), borrowed - begin, answered, rec, port,
                  app, e.getSQLState(), AT_COMMIT + e.getSQLState() + " " + e.getMessage()));
              continue;
            }
            add(new Op(false, begin, System.nanoTime(), borrowed - begin, answered, rec, port,
                app, null, null));
          } catch (SQLException e) {
            rollbackQuietly(c);
            throw e;
          }
        }
      } catch (SQLException e) {
        if (!write && traced++ < 3) {
          System.out.println("read failure in " + name + ":");
          e.printStackTrace(System.out);
        }
        add(new Op(write, begin, System.nanoTime(), borrowed - begin, 0, false, 0, null,
            e.getSQLState(), e.getSQLState() + " " + e.getMessage()));
      } catch (RuntimeException e) {
        add(new Op(write, begin, System.nanoTime(), borrowed - begin, 0, false, 0, null, "JAVA",
            e.toString()));
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pauseMillis));
    }
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException | RuntimeException ignored) {
      // the session may be gone; the failure itself is recorded
    }
  }
}
