package dev.omnium.agenttests;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * Test-side heartbeat writer: creates {@code replica_heartbeat} on the primary and updates its row
 * every {@code period}, so the replicas look as fresh as they really are.
 */
final class Heartbeat implements AutoCloseable {
  private final Thread thread;
  private volatile boolean running = true;

  private Heartbeat(PgCluster cluster, Duration period) throws SQLException {
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS replica_heartbeat "
          + "(id int PRIMARY KEY CHECK (id = 1), beat_at timestamptz NOT NULL)");
      st.execute("INSERT INTO replica_heartbeat VALUES (1, now()) ON CONFLICT (id) DO UPDATE SET beat_at = now()");
    }
    for (PgNode r : cluster.replicas()) cluster.awaitCaughtUp(r);
    thread = new Thread(() -> {
      Connection c = null;
      while (running) {
        try {
          if (c == null) c = cluster.connect(cluster.primary());
          try (Statement st = c.createStatement()) {
            st.executeUpdate("UPDATE replica_heartbeat SET beat_at = now() WHERE id = 1");
          }
        } catch (SQLException e) {
          try {
            if (c != null) c.close();
          } catch (SQLException ignored) {
            // reconnect on the next beat
          }
          c = null;
        }
        try {
          Thread.sleep(period.toMillis());
        } catch (InterruptedException e) {
          break;
        }
      }
      try {
        if (c != null) c.close();
      } catch (SQLException ignored) {
        // discarded
      }
    }, "test-heartbeat");
    thread.setDaemon(true);
    thread.start();
  }

  static Heartbeat start(PgCluster cluster, Duration period) throws SQLException {
    return new Heartbeat(cluster, period);
  }

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
