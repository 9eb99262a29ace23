package dev.omnium.conformance;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;

/**
 * Runs every scenario in this JVM with plain {@code DriverManager} connections to an unmodified
 * {@code jdbc:postgresql:} URL (the application knows nothing of omnium; a {@code -javaagent}
 * may be attached) and prints what each saw; server observations are asked of the test JVM.
 *
 * <pre>
 * ForkMain URL USER APPLICATION_NAME [warm]
 * </pre>
 * With {@code warm}, waits (at most 20 s) until a read-only statement runs on a replica first.
 * Output: {@code SCENARIO id}, one {@code OBS} line per entry, {@code DONE id}; then
 * {@code ALL-DONE n}. Everything else on stdout is ignored by the reader.
 */
public final class ForkMain {
  private ForkMain() { }

  public static void main(String[] args) throws Exception {
    String url = args[0];
    Properties props = new Properties();
    props.setProperty("user", args[1]);
    String app = args[2];
    boolean warm = args.length > 3 && args[3].equals("warm");
    // Our protocol owns the real stdout; anything else printing goes to stderr.
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true,
        StandardCharsets.UTF_8);
    System.setOut(System.err);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
        StandardCharsets.UTF_8));
    Server server = new RemoteServer(out, in);
    Source source = new Source() {
      @Override
      public Connection open() throws SQLException {
        return DriverManager.getConnection(url, props);
      }

      @Override
      public String app() {
        return app;
      }
    };
    if (warm) {
      out.println("WARM " + awaitReplicaReads(source, Duration.ofSeconds(20)));
    }
    int n = 0;
    for (Scenario s : Scenarios.all()) {
      Observation o = s.runOn(source, server);
      print(out, s, o);
      n++;
    }
    finish(out, n);
  }

  /** One scenario's observation, in the lines {@code Fork} reads back. */
  static void print(PrintStream out, Scenario s, Observation o) {
    synchronized (out) {
      out.println("SCENARIO\t" + s.id());
      for (String l : o.serialize()) {
        out.println("OBS\t" + l);
      }
      out.println("DONE\t" + s.id());
    }
  }

  /** The last line {@code Fork} waits for; ends the JVM. */
  static void finish(PrintStream out, int scenarios) {
    out.println("ALL-DONE " + scenarios);
    out.flush();
    System.exit(0);
  }

  /**
   * Waits (bounded) until a read-only statement of {@code source} runs on a replica, so that the
   * scenarios' reads take the replica route; returns false when it did not happen in time (the
   * reads then take the fallback route, which the suite accepts as well).
   */
  static boolean awaitReplicaReads(Source source, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      try (Connection c = source.open()) {
        c.setReadOnly(true);
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
          rs.next();
          if (rs.getBoolean(1)) {
            return true;
          }
        }
      }
      Thread.sleep(100);
    }
    return false;
  }
}
