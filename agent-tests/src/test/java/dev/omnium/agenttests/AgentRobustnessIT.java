package dev.omnium.agenttests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The agent never breaks the application: a bad argument or an unreachable replica is one clear
 * log line and the application works as without the agent; and runtime attach to a running JVM.
 */
class AgentRobustnessIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).sql(Apps.SCHEMA).build();
  static final Apps APPS = new Apps(SANDBOX);

  /** Exactly one agent line at WARN/ERROR, at {@code level}, mentioning every {@code words}. */
  static void assertOneLine(AppProcess app, String level, String... words) {
    List<String> problems = Apps.problems(app);
    assertEquals(1, problems.size(), "expected one agent WARN/ERROR line, got " + problems + "\n" + app.transcript());
    String line = problems.get(0);
    assertTrue(line.startsWith("[omnium-agent] " + level + " "), line);
    for (String w : words) assertTrue(line.contains(w), "'" + w + "' missing in: " + line);
  }

  // ---------------------------------------------------------------- 5. bad arguments

  @Test
  void anUnknownKeyIsOneErrorLineAndTheApplicationRunsAsWithoutTheAgent() throws Exception {
    String args = "replca=" + SANDBOX.replica(0).hostPort() + "&applicationName=typo";
    AppProcess app = Apps.run("plain+agent(unknown key)", APPS.plain(args, "typo-own", 3), null);
    APPS.assertAllOnPrimary(app, "typo-own");
    assertOneLine(app, "ERROR", "replca", "without the agent");
  }

  @Test
  void aBadValueIsOneErrorLineNamingTheKey() throws Exception {
    AppProcess app = Apps.run("plain+agent(bad value)", APPS.plain(APPS.agentArgs("badval") + "&maxAge=banana", "badval-own", 3), null);
    APPS.assertAllOnPrimary(app, "badval-own");
    assertOneLine(app, "ERROR", "maxAge", "banana");
  }

  @Test
  void aMalformedArgumentIsOneErrorLine() throws Exception {
    AppProcess app = Apps.run("plain+agent(malformed)", APPS.plain("replica", "malformed-own", 3), null);
    APPS.assertAllOnPrimary(app, "malformed-own");
    assertOneLine(app, "ERROR", "key=value");
  }

  @Test
  void noArgumentAtAllLeavesEverythingAlone() throws Exception {
    AppProcess app = Apps.run("plain+agent(no argument)", APPS.plain("", "noarg-own", 3), null);
    APPS.assertAllOnPrimary(app, "noarg-own");
    assertOneLine(app, "ERROR", "OMNIUM_AGENT_ARGS");
  }

  @Test
  void anUnknownKeyInASpringBootFatJarIsCaughtAtTheFirstConnection() throws Exception {
    // At premain the fat jar's pgjdbc is not visible yet: the key is checked next to it.
    String args = "replca=" + SANDBOX.replica(0).hostPort() + "&applicationName=boottypo";
    AppProcess app = Apps.run("spring+agent(unknown key)", APPS.spring(args, "boottypo-own", 2), null);
    APPS.assertAllOnPrimary(app, "boottypo-own");
    assertOneLine(app, "ERROR", "replca");
  }

  // ---------------------------------------------------------------- 5. an unreachable replica

  @Test
  void anUnreachableReplicaIsOneWarningAndReadsUseTheFallbackPool() throws Exception {
    int closed = Apps.freePort();
    String args = "replica=127.0.0.1:" + closed + "&applicationName=noreplica&heartbeatInterval=200ms";
    AppProcess app = Apps.run("plain+agent(unreachable replica)", APPS.plain(args, "noreplica-own", 5), null);
    for (Where w : app.wheres()) {
      assertEquals(SANDBOX.primary().port(), w.port(), w + "\n" + app.transcript());
      String expected = w.unit().equals("xa") ? "noreplica-own" : w.isRead() ? "noreplica:fallback" : "noreplica";
      assertEquals(expected, w.applicationName(), w + "\n" + app.transcript());
    }
    assertOneLine(app, "WARN", "127.0.0.1:" + closed);
  }

  // ---------------------------------------------------------------- 6. runtime attach

  @Test
  void runtimeAttachRoutesConnectionsOpenedAfterwards() throws Exception {
    AppProcess app = AppProcess.start("plain(attach)", APPS.plain(null, "attach-own", 12, "wait"), null);
    try {
      String ready = app.awaitLine("READY ", Duration.ofSeconds(30));
      long pid = Long.parseLong(ready.substring("READY ".length()).trim());
      assertEquals(app.pid(), pid);

      List<String> attach = new ArrayList<>(List.of(AppProcess.JAVA, "-jar", Apps.agentJar(), "attach",
          Long.toString(pid), APPS.agentArgs("attached")));
      AppProcess cli = AppProcess.start("attach-cli", attach, null);
      int code;
      try {
        code = cli.await(Duration.ofSeconds(60));
      } finally {
        cli.close();
      }
      System.out.println("[agent-tests] attach-cli: " + cli.stdout() + " " + cli.stderr());
      assertEquals(0, code, cli.transcript() + "\n" + app.transcript());
      assertTrue(String.join("\n", cli.stdout()).contains("active"), cli.transcript());

      app.send("go");
      assertEquals(0, app.await(Apps.RUN_TIMEOUT), app.transcript());
      Apps.summarize("plain(attach)", app);

      List<Where> before = new ArrayList<>();
      List<Where> after = new ArrayList<>();
      Where old = null;
      for (Where w : app.wheres()) {
        if (w.unit().startsWith("before-")) before.add(w);
        else if (w.unit().equals("old-read")) old = w;
        else after.add(w);
      }
      // Before the attach: plain pgjdbc on the primary.
      assertEquals(2, before.size(), app.transcript());
      for (Where w : before) {
        assertEquals(SANDBOX.primary().port(), w.port());
        assertEquals("attach-own", w.applicationName(), w.toString());
      }
      // The connection opened before the attach stays plain pgjdbc.
      assertTrue(old != null && !old.inRecovery() && "attach-own".equals(old.applicationName()),
          "old connection: " + old + "\n" + app.transcript());
      // Connections opened afterwards route.
      APPS.assertRouted(after, app.transcript(), "attached", 3);
      assertTrue(app.agentLines().stream().anyMatch(l -> l.contains("INFO active:")), app.transcript());
      assertEquals(List.of(), Apps.problems(app), app.transcript());
    } finally {
      app.close();
    }
  }
}
