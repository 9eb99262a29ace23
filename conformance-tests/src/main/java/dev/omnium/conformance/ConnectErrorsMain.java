package dev.omnium.conformance;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * Runs the connect-error programs ({@link ConnectErrorScenarios}) in this JVM with plain
 * {@code DriverManager} connects to unmodified {@code jdbc:postgresql:} URLs (a
 * {@code -javaagent} may be attached) and prints what each saw, in {@link ForkMain}'s protocol.
 *
 * <pre>
 * ConnectErrorsMain BASE_URL APPLICATION_NAME CASE...
 * </pre>
 * {@code BASE_URL} is {@code jdbc:postgresql://host:port/}; each {@code CASE} is
 * {@link ConnectErrorScenarios.Case#encode()}.
 */
public final class ConnectErrorsMain {
  private ConnectErrorsMain() { }

  public static void main(String[] args) throws Exception {
    String base = args[0];
    String app = args[1];
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true,
        StandardCharsets.UTF_8);
    System.setOut(System.err);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
        StandardCharsets.UTF_8));
    Server server = new RemoteServer(out, in);
    int n = 0;
    for (int i = 2; i < args.length; i++) {
      ConnectErrorScenarios.Case c = ConnectErrorScenarios.Case.decode(args[i]);
      String url = c.url(base, app);
      Source source = new Source() {
        @Override
        public Connection open() throws SQLException {
          return DriverManager.getConnection(url);
        }

        @Override
        public String app() {
          return app;
        }
      };
      Scenario s = ConnectErrorScenarios.scenario(c);
      Observation o = s.runOn(source, server);
      ForkMain.print(out, s, o);
      n++;
    }
    ForkMain.finish(out, n);
  }
}
