package dev.omnium.conformance;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One forked application JVM running {@link ForkMain}: serves its control requests against the
 * cluster and collects the observation of every scenario. Bounded: killed after 6 minutes.
 */
final class Fork {
  static final String JAVA = System.getProperty("java.home") + "/bin/java";

  private Fork() { }

  static String property(String name) {
    String v = System.getProperty(name);
    if (v == null) {
      throw new IllegalStateException("system property " + name
          + " is not set (run through Failsafe)");
    }
    return v;
  }

  /** @return {@code java [-javaagent:JAR=ARGS] -cp CP ForkMain URL USER APP [warm]} */
  static List<String> command(String agentArgs, String url, String user, String app) {
    List<String> cmd = new ArrayList<>();
    cmd.add(JAVA);
    cmd.add("-XX:TieredStopAtLevel=1");
    if (agentArgs != null) {
      cmd.add("-javaagent:" + new File(property("agent.jar")).getAbsolutePath() + "=" + agentArgs);
    }
    cmd.add("-cp");
    cmd.add(property("fork.classpath"));
    cmd.add(ForkMain.class.getName());
    cmd.add(url);
    cmd.add(user);
    cmd.add(app);
    if (agentArgs != null) {
      cmd.add("warm");
    }
    return cmd;
  }

  /** Runs the fork to its end; returns each scenario's observation, in catalog order. */
  static Map<String, Observation> run(String name, List<String> command, Server server)
      throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().remove("JAVA_TOOL_OPTIONS");
    pb.environment().remove("OMNIUM_AGENT_ARGS");
    File err = new File("target/fork-" + name + ".stderr.log");
    pb.redirectError(err);
    Process p = pb.start();
    Thread watchdog = new Thread(() -> {
      try {
        if (!p.waitFor(6, TimeUnit.MINUTES)) {
          p.descendants().forEach(ProcessHandle::destroyForcibly);
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
      }
    }, "fork-watchdog-" + name);
    watchdog.setDaemon(true);
    watchdog.start();
    Map<String, Observation> result = new LinkedHashMap<>();
    String done = null;
    try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8)); PrintWriter in = new PrintWriter(new OutputStreamWriter(
            p.getOutputStream(), StandardCharsets.UTF_8), true)) {
      String current = null;
      List<String> lines = new ArrayList<>();
      for (String l; (l = out.readLine()) != null; ) {
        if (l.startsWith("CTL\t")) {
          in.println(RemoteServer.serve(server, l));
        } else if (l.startsWith("SCENARIO\t")) {
          current = l.substring("SCENARIO\t".length());
          lines.clear();
        } else if (l.startsWith("OBS\t")) {
          lines.add(l.substring("OBS\t".length()));
        } else if (l.startsWith("DONE\t") && current != null) {
          result.put(current, Observation.parse(lines));
          current = null;
        } else if (l.startsWith("ALL-DONE") || l.startsWith("WARM")) {
          done = l;
          System.out.println("[conformance] fork " + name + ": " + l);
        }
      }
    } finally {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
    if (p.exitValue() != 0 || done == null || !done.startsWith("ALL-DONE")) {
      throw new AssertionError("fork " + name + " failed (exit " + p.exitValue() + ", " + done
          + "); stderr in " + err.getAbsolutePath());
    }
    return result;
  }
}
