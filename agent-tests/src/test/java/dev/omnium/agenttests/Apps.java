package dev.omnium.agenttests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How the tests launch the applications (with or without the agent) and what they assert about
 * the WHERE lines. One instance per test class, around that class's sandbox.
 */
final class Apps {
  static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);

  /** The table the applications write to: put it in the sandbox's SQL ({@code sql(SCHEMA)}). */
  static final String SCHEMA = "CREATE TABLE IF NOT EXISTS agent_writes"
      + " (id bigserial PRIMARY KEY, app text, at timestamptz DEFAULT now())";

  private final PgSandbox sandbox;

  Apps(PgSandbox sandbox) {
    this.sandbox = sandbox;
  }

  static String agentJar() {
    String jar = System.getProperty("agent.jar");
    assertTrue(jar != null && new File(jar).isFile(), "agent.jar (the shaded agent) not found: " + jar);
    return new File(jar).getAbsolutePath();
  }

  static String property(String name) {
    String v = System.getProperty(name);
    if (v == null) throw new IllegalStateException("system property " + name + " is not set (run through Maven Failsafe)");
    return v;
  }

  /** The application's own, unmodified URL: plain pgjdbc, with its own ApplicationName. */
  String appUrl(String ownName) {
    return "jdbc:postgresql://" + sandbox.primary().hostPort() + "/" + sandbox.cluster().database() + "?ApplicationName=" + ownName;
  }

  /** The agent argument for this cluster's replica. */
  String agentArgs(String applicationName) {
    return "replica=" + sandbox.replica(0).hostPort() + "&applicationName=" + applicationName
        + "&heartbeatInterval=200ms&maxAge=5s";
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** {@code java [-javaagent:JAR[=ARG]] -cp CP MAIN ARGS...}; agentArg null: no agent; "" : the agent without argument. */
  static List<String> java(String agentArg, String classpathProperty, String main, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(AppProcess.JAVA);
    cmd.add("-XX:TieredStopAtLevel=1");
    if (agentArg != null) cmd.add("-javaagent:" + agentJar() + (agentArg.isEmpty() ? "" : "=" + agentArg));
    cmd.add("-cp");
    cmd.add(property(classpathProperty));
    cmd.add(main);
    cmd.addAll(List.of(args));
    return cmd;
  }

  List<String> plain(String agentArg, String ownName, int rounds, String... extra) {
    List<String> args = new ArrayList<>(List.of(appUrl(ownName), sandbox.cluster().user(), Integer.toString(rounds), "100"));
    args.addAll(List.of(extra));
    return java(agentArg, "apps.plain.classpath", "dev.omnium.agenttests.apps.PlainJdbcApp", args.toArray(new String[0]));
  }

  List<String> hikari(String agentArg, String mode, String ownName, int threads, int rounds) {
    return java(agentArg, "apps.hikari.classpath", "dev.omnium.agenttests.apps.HikariApp",
        mode, appUrl(ownName), sandbox.cluster().user(), Integer.toString(threads), Integer.toString(rounds), "100");
  }

  List<String> spring(String agentArg, String ownName, int rounds) {
    List<String> cmd = new ArrayList<>();
    cmd.add(AppProcess.JAVA);
    cmd.add("-XX:TieredStopAtLevel=1");
    if (agentArg != null) cmd.add("-javaagent:" + agentJar() + (agentArg.isEmpty() ? "" : "=" + agentArg));
    cmd.add("-jar");
    cmd.add(property("apps.spring.jar"));
    cmd.add("--spring.datasource.url=" + appUrl(ownName));
    cmd.add("--spring.datasource.username=" + sandbox.cluster().user());
    cmd.add("--spring.main.banner-mode=off");
    cmd.add("--logging.level.root=WARN");
    cmd.add("--rounds=" + rounds);
    cmd.add("--pauseMs=100");
    return cmd;
  }

  /** Runs an application to its end; returns it after asserting a clean exit and DONE. */
  static AppProcess run(String name, List<String> command, Map<String, String> env) throws Exception {
    AppProcess app = AppProcess.start(name, command, env);
    try {
      int code = app.await(RUN_TIMEOUT);
      summarize(name, app);
      assertEquals(0, code, name + " exited with " + code + "\n" + app.transcript());
      assertTrue(app.stdout().contains("DONE"), name + " did not finish its work\n" + app.transcript());
      return app;
    } finally {
      app.close();
    }
  }

  /** One compact block per run in the test output: where the units ran, and the agent's lines. */
  static void summarize(String name, AppProcess app) {
    Map<String, Integer> counts = new java.util.TreeMap<>();
    for (Where w : app.wheres()) {
      String kind = w.isWrite() ? "write" : w.isRead() ? "read" : w.unit();
      counts.merge(kind + "@" + w.port() + (w.inRecovery() ? "(replica)" : "(primary)") + "[" + w.applicationName() + "]", 1, Integer::sum);
    }
    StringBuilder sb = new StringBuilder("[agent-tests] ").append(name).append(": ").append(counts);
    for (String l : app.agentLines()) sb.append("\n    ").append(l);
    System.out.println(sb);
  }

  // ---------------------------------------------------------------- assertions

  /** Without the agent (or when it stays out): every unit on the primary, under the application's own name. */
  void assertAllOnPrimary(AppProcess app, String ownName) {
    List<Where> all = app.wheres();
    assertFalse(all.isEmpty(), "no WHERE lines\n" + app.transcript());
    for (Where w : all) {
      assertFalse(w.inRecovery(), w + " ran on a replica\n" + app.transcript());
      assertEquals(sandbox.primary().port(), w.port(), w + " not on the primary\n" + app.transcript());
      assertEquals(ownName, w.applicationName(), w + ": application_name\n" + app.transcript());
    }
  }

  /**
   * With the agent: writes on the primary under {@code app}; reads on the replica under
   * {@code app:replica}, except possibly the first ones before the replica's lag was first measured,
   * which take the fallback route ({@code app:fallback} on the primary); the last
   * {@code lastOnReplica} reads of each unit kind are on the replica.
   */
  void assertRouted(AppProcess app, String appName, int lastOnReplica) {
    assertRouted(app.wheres(), app.transcript(), appName, lastOnReplica);
  }

  void assertRouted(List<Where> all, String transcript, String appName, int lastOnReplica) {
    List<Where> reads = new ArrayList<>();
    int writes = 0;
    for (Where w : all) {
      if (w.isWrite()) {
        writes++;
        assertFalse(w.inRecovery(), w + ": a write ran on a replica\n" + transcript);
        assertEquals(sandbox.primary().port(), w.port(), w + ": a write not on the primary\n" + transcript);
        assertEquals(appName, w.applicationName(), w + ": application_name of a write\n" + transcript);
      } else if (w.isRead()) {
        reads.add(w);
        if (w.inRecovery()) {
          assertEquals(sandbox.replica(0).port(), w.port(), w + "\n" + transcript);
          assertEquals(appName + ":replica", w.applicationName(), w + "\n" + transcript);
        } else {
          assertEquals(sandbox.primary().port(), w.port(), w + "\n" + transcript);
          assertEquals(appName + ":fallback", w.applicationName(),
              w + ": a read on the primary must be a fallback read\n" + transcript);
        }
      }
    }
    assertTrue(writes > 0, "no writes reported\n" + transcript);
    assertTrue(reads.size() > lastOnReplica, "too few reads reported\n" + transcript);
    for (Where w : reads.subList(reads.size() - lastOnReplica, reads.size())) {
      assertTrue(w.inRecovery(), "late read " + w + " not on the replica; reads: " + reads + "\n" + transcript);
    }
  }

  /** The agent's stderr lines at WARN or ERROR. */
  static List<String> problems(AppProcess app) {
    List<String> p = new ArrayList<>();
    for (String l : app.agentLines()) {
      if (l.startsWith("[omnium-agent] WARN") || l.startsWith("[omnium-agent] ERROR")) p.add(l);
    }
    return p;
  }
}
