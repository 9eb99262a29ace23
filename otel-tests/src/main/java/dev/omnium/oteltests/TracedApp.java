package dev.omnium.oteltests;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDataSource;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * An application that runs units of work and prints, for each statement, what the server that ran
 * it said: {@code RAN <tag> <pg_is_in_recovery> <inet_server_port>}. The tag is a column alias in
 * the statement's SQL, so the statement's span (whose query text keeps identifiers) can be matched
 * with the line. With the OpenTelemetry API on the class path each unit of work is a span of its
 * own ({@code UNIT <n> <traceId> <spanId>}), the parent of its statements' spans.
 *
 * <pre>
 * TracedApp pool|datasource URL USER UNITS IDLE_MS [retry [conflict]]
 * </pre>
 * {@code pool}: an application-owned HikariCP pool on the URL ({@code jdbc:postgresql:} with or
 * without omnium's agent, or {@code jdbc:omnium:}); {@code datasource}: an {@code OmniumDataSource}.
 * {@code retry}: after the units, prints {@code PAUSE}, waits for a line on stdin, then runs one
 * read-only statement (tag {@code x1}). {@code conflict}: then read-only statements ({@code x2},
 * …) until one runs on the replica again, and {@link #SLOW_READ} (tag {@code c1}), which the test
 * makes the replica cancel (40001) by truncating its table on the primary. Then it stays idle for
 * IDLE_MS (omnium's background work goes on) and prints {@code DONE}.
 */
public final class TracedApp {
  public static final String SCHEMA = "CREATE TABLE IF NOT EXISTS otel_writes"
      + " (id bigserial PRIMARY KEY, unit int, at timestamptz DEFAULT now())";
  /** What the conflict scenario's slow read holds on the replica while the primary truncates it. */
  public static final String CONFLICT_SCHEMA = "CREATE TABLE IF NOT EXISTS otel_conflict (v int)";
  public static final String CONFLICT_DATA = "INSERT INTO otel_conflict SELECT generate_series(1, 100)";
  /** The slow read (tag c1) of the conflict scenario. */
  public static final String SLOW_READ = "SELECT pg_is_in_recovery() AS c1, inet_server_port(),"
      + " (SELECT count(*) FROM otel_conflict), pg_sleep(3)";

  private TracedApp() { }

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String url = args[1];
    String user = args[2];
    int units = Integer.parseInt(args[3]);
    long idleMillis = Long.parseLong(args[4]);
    boolean retry = args.length > 5 && "retry".equals(args[5]);
    boolean conflict = args.length > 6 && "conflict".equals(args[6]);

    DataSource ds;
    AutoCloseable closer;
    if ("datasource".equals(mode)) {
      OmniumDataSource o = new OmniumDataSource();
      o.setUrl(url);
      o.setUser(user);
      ds = o;
      closer = o;
    } else {
      HikariConfig config = new HikariConfig();
      config.setJdbcUrl(url);
      config.setUsername(user);
      config.setMaximumPoolSize(2);
      config.setPoolName("app-pool");
      HikariDataSource pool = new HikariDataSource(config);
      ds = pool;
      closer = pool;
    }
    Units spans = Units.create();
    try {
      for (int i = 1; i <= units; i++) {
        int n = i;
        spans.run(n, () -> unit(ds, n));
        Thread.sleep(150);
      }
      if (retry) {
        System.out.println("PAUSE");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        spans.run(0, () -> {
          try (Connection c = ds.getConnection()) {
            c.setReadOnly(true);
            query(c, "x1");
            // the pool's other replica sessions were terminated too: each is found dead once
            for (int k = 2; conflict && k <= 20 && !query(c, "x" + k); k++) {
              Thread.sleep(50);
            }
            if (conflict) {
              try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(SLOW_READ)) {
                print(rs, "c1");
              }
            }
          }
        });
      }
      Thread.sleep(idleMillis);
    } finally {
      closer.close();
    }
    System.out.println("DONE");
  }

  /** A read-only transaction (a statement, a prepared statement), a read-only autocommit statement, a write. */
  static void unit(DataSource ds, int n) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      query(c, "r" + n + "a");
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT pg_is_in_recovery() AS r" + n + "b, inet_server_port() WHERE ? = 1")) {
        ps.setInt(1, 1);
        try (ResultSet rs = ps.executeQuery()) {
          print(rs, "r" + n + "b");
        }
      }
      c.commit();
      c.setAutoCommit(true);
      query(c, "a" + n);
    }
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO otel_writes (unit) VALUES (?)"
          + " RETURNING pg_is_in_recovery() AS w" + n + ", inet_server_port()")) {
        ps.setInt(1, n);
        try (ResultSet rs = ps.executeQuery()) {
          print(rs, "w" + n);
        }
      }
      c.commit();
    }
  }

  /** Runs the tagged query; returns whether it ran on a replica. */
  static boolean query(Connection c, String tag) throws SQLException {
    try (Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery() AS " + tag + ", inet_server_port()")) {
      return print(rs, tag);
    }
  }

  private static boolean print(ResultSet rs, String tag) throws SQLException {
    rs.next();
    boolean inRecovery = rs.getBoolean(1);
    synchronized (System.out) {
      System.out.println("RAN " + tag + " " + inRecovery + " " + rs.getInt(2));
      System.out.flush();
    }
    return inRecovery;
  }

  /** A unit of work. */
  interface Work {
    void run() throws Exception;
  }

  /** Units of work as spans when the OpenTelemetry API is on the class path; else just run. */
  static class Units {
    static Units create() {
      try {
        Class.forName("io.opentelemetry.api.GlobalOpenTelemetry");
        return new ApiUnits();
      } catch (ClassNotFoundException e) {
        return new Units();
      }
    }

    void run(int n, Work work) throws Exception {
      work.run();
    }
  }
}
