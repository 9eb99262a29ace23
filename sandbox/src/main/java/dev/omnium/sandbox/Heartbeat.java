package dev.omnium.sandbox;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * A test-side heartbeat writer for a sandbox cluster: creates the heartbeat table
 * {@code replica_heartbeat (id int PRIMARY KEY CHECK (id = 1), beat_at timestamptz NOT NULL)} on
 * the primary and updates its row every {@code period}, the way a production writer does, so lag
 * read on a replica is real replay lag. It reconnects by itself across a primary restart.
 */
public final class Heartbeat implements AutoCloseable {
  private final Thread thread;
  private volatile boolean running = true;

  private Heartbeat(PgCluster cluster, Duration period) throws SQLException {
    createTable(cluster);
    thread = new Thread(() -> beat(cluster, period), "sandbox-heartbeat");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Creates the table and its row if needed, waits until every replica has them, then updates the
   * row every {@code period} until closed.
   */
  public static Heartbeat start(PgCluster cluster, Duration period) throws SQLException {
    return new Heartbeat(cluster, period);
  }

  /**
   * Creates the heartbeat table and its row on the primary and waits until every replica has them.
   */
  public static void createTable(PgCluster cluster) throws SQLException {
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS replica_heartbeat "
          + "(id int PRIMARY KEY CHECK (id = 1), beat_at timestamptz NOT NULL)");
      st.execute("INSERT INTO replica_heartbeat VALUES (1, now()) ON CONFLICT (id) DO UPDATE SET"
          + " beat_at = now()");
    }
    for (PgNode r : cluster.replicas()) cluster.awaitCaughtUp(r);
  }

  private void beat(PgCluster cluster, Duration period) {
    Connection c = null;
    while (running) {
      try {
        if (c == null) c = cluster.connect(cluster.primary());
        try (Statement st = c.createStatement()) {
          st.executeUpdate("UPDATE replica_heartbeat SET beat_at = now() WHERE id = 1");
        }
      } catch (SQLException e) {
        // the primary may be restarting in a test: reconnect on the next beat
        closeQuietly(c);
        c = null;
      }
      try {
        Thread.sleep(period.toMillis());
      } catch (InterruptedException e) {
        break;
      }
    }
    closeQuietly(c);
  }

  private static void closeQuietly(Connection c) {
    if (c == null) return;
    try {
      c.close();
    } catch (SQLException ignored) {
      // discarded
    }
  }

  /** Stops updating (the table stays). */
  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
