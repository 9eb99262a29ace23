package dev.omnium.agenttests.apps;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An application-owned HikariCP pool; several threads run read-only and read-write transactions.
 *
 * <pre>
 * HikariApp jdbcUrl|dataSource URL USER THREADS ROUNDS PAUSE_MS
 * </pre>
 * {@code jdbcUrl}: the pool is configured with the URL; {@code dataSource}: with
 * {@code dataSourceClassName=org.postgresql.ds.PGSimpleDataSource} and its {@code url} property.
 */
public final class HikariApp {
  private HikariApp() { }

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String url = args[1];
    String user = args[2];
    int threads = Integer.parseInt(args[3]);
    int rounds = Integer.parseInt(args[4]);
    long pause = Long.parseLong(args[5]);

    HikariConfig config = new HikariConfig();
    if ("dataSource".equals(mode)) {
      config.setDataSourceClassName("org.postgresql.ds.PGSimpleDataSource");
      config.addDataSourceProperty("url", url);
      config.addDataSourceProperty("user", user);
    } else {
      config.setJdbcUrl(url);
      config.setUsername(user);
    }
    config.setMaximumPoolSize(threads);
    config.setPoolName("app-pool");
    AtomicInteger failures = new AtomicInteger();
    try (HikariDataSource pool = new HikariDataSource(config)) {
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        Thread w = new Thread(() -> {
          try {
            for (int i = 0; i < rounds; i++) {
              readOnly(pool, id);
              readWrite(pool, id);
              Report.sleep(pause);
            }
          } catch (Exception e) {
            failures.incrementAndGet();
            e.printStackTrace();
          }
        }, "worker-" + t);
        workers.add(w);
        w.start();
      }
      for (Thread w : workers) w.join();
    }
    System.out.println(failures.get() == 0 ? "DONE" : "FAILED " + failures.get());
  }

  private static void readOnly(HikariDataSource pool, int id) throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM agent_writes")) {
        rs.next();
      }
      Report.where("read-t" + id, c);
      c.commit();
    }
  }

  private static void readWrite(HikariDataSource pool, int id) throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(Report.INSERT)) {
        ps.setString(1, "hikari-" + id);
        ps.executeUpdate();
      }
      Report.where("write-t" + id, c);
      c.commit();
    }
  }
}
