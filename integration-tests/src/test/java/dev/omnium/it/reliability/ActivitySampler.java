package dev.omnium.it.reliability;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Samples pg_stat_activity of one server continuously, on its own connection, and keeps the largest
 * number of sessions seen per application_name of interest: what the server held, not what the
 * driver believes.
 */
final class ActivitySampler implements AutoCloseable {
  private final String[] names;
  private final AtomicInteger[] max;
  private final AtomicInteger samples = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();
  private final Thread thread;
  private volatile boolean running = true;

  ActivitySampler(PgCluster cluster, PgNode node, String... applicationNames) {
    this.names = applicationNames.clone();
    this.max = new AtomicInteger[names.length];
    for (int i = 0; i < names.length; i++) max[i] = new AtomicInteger();
    StringBuilder sql = new StringBuilder("SELECT ");
    for (int i = 0; i < names.length; i++) {
      sql.append(i == 0 ? "" : ", ").append("count(*) FILTER (WHERE application_name = ?)");
    }
    sql.append(" FROM pg_stat_activity WHERE pid <> pg_backend_pid()");
    thread = new Thread(() -> {
      Properties p = new Properties();
      p.setProperty("ApplicationName", "activity-sampler");
      p.setProperty("socketTimeout", "10");
      Connection c = null;
      while (running) {
        try {
          if (c == null) c = cluster.connect(node, p);
          try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            for (int i = 0; i < names.length; i++) ps.setString(i + 1, names[i]);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              for (int i = 0; i < names.length; i++) max[i].accumulateAndGet(rs.getInt(i + 1), Math::max);
            }
          }
          samples.incrementAndGet();
          Thread.sleep(2);
        } catch (SQLException e) {
          failures.incrementAndGet();
          try {
            if (c != null) c.close();
          } catch (SQLException ignored) {
            // reconnect
          }
          c = null;
          Poll.pause(50);
        } catch (InterruptedException e) {
          break;
        }
      }
      try {
        if (c != null) c.close();
      } catch (SQLException ignored) {
        // done
      }
    }, "activity-sampler-" + node.name());
    thread.setDaemon(true);
    thread.start();
  }

  /** The largest number of sessions with that application_name seen in one sample. */
  int max(String applicationName) {
    for (int i = 0; i < names.length; i++) if (names[i].equals(applicationName)) return max[i].get();
    throw new IllegalArgumentException(applicationName);
  }

  int samples() {
    return samples.get();
  }

  int failures() {
    return failures.get();
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.join(15_000);
  }
}
