package dev.omnium.agenttests.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.Properties;

/**
 * Plain JDBC through {@code DriverManager}, no pool: each round opens a connection, runs one
 * read-only unit ({@code setReadOnly(true)}, autocommit) and one write transaction, and closes it.
 *
 * <pre>
 * PlainJdbcApp URL USER ROUNDS PAUSE_MS [wait]
 * </pre>
 * With {@code wait}, it first runs one round, keeps that connection open, prints
 * {@code READY <pid>} and waits for a line on stdin before the remaining rounds; then it also
 * reports a read on the connection opened before the wait ({@code old-read}).
 */
public final class PlainJdbcApp {
  private PlainJdbcApp() { }

  public static void main(String[] args) throws Exception {
    String url = args[0];
    Properties props = new Properties();
    props.setProperty("user", args[1]);
    int rounds = Integer.parseInt(args[2]);
    long pause = Long.parseLong(args[3]);
    boolean wait = args.length > 4 && "wait".equals(args[4]);

    Connection old = null;
    if (wait) {
      old = DriverManager.getConnection(url, props);
      round(old, "before");
      System.out.println("READY " + ManagementFactory.getRuntimeMXBean().getPid());
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      if (in.readLine() == null) return;
    }
    for (int i = 0; i < rounds; i++) {
      try (Connection c = DriverManager.getConnection(url, props)) {
        if (i == 0) {
          // What a monitoring agent or COPY code sees: the connection class and pgjdbc's, unwrapped.
          System.out.println("CLASSES " + c.getClass().getName() + " "
              + c.unwrap(org.postgresql.PGConnection.class).getClass().getName() + " "
              + c.isWrapperFor(org.postgresql.PGConnection.class));
        }
        round(c, "");
      }
      Report.sleep(pause);
    }
    if (old != null) {
      old.setReadOnly(true);
      Report.where("old-read", old);
      old.close();
    }
    // pgjdbc's XA data source casts the connection it gets to its own class: it must keep working.
    org.postgresql.xa.PGXADataSource xa = new org.postgresql.xa.PGXADataSource();
    xa.setUrl(url);
    xa.setUser(args[1]);
    javax.sql.XAConnection x = xa.getXAConnection();
    try (Connection c = x.getConnection()) {
      Report.where("xa", c);
    } finally {
      x.close();
    }
    System.out.println("DONE");
  }

  private static void round(Connection c, String prefix) throws Exception {
    String p = prefix.isEmpty() ? "" : prefix + "-";
    c.setReadOnly(true);
    Report.where(p + "read", c);
    c.setReadOnly(false);
    c.setAutoCommit(false);
    try (PreparedStatement ps = c.prepareStatement(Report.INSERT)) {
      ps.setString(1, "plain");
      ps.executeUpdate();
    }
    Report.where(p + "write", c);
    c.commit();
    c.setAutoCommit(true);
  }
}
