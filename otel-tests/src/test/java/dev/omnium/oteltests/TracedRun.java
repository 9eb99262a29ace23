package dev.omnium.oteltests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.Poll;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One forked run of {@link TracedApp}: its command line, what it printed (stdout and stderr kept in
 * files under target/otel-runs) and the spans the agent exported.
 */
final class TracedRun {
  static final Duration RUN_TIMEOUT = Duration.ofSeconds(180);

  /** What the server said about one statement: {@code RAN tag inRecovery port}. */
  record Ran(String tag, boolean inRecovery, int port) { }

  /** One unit of work's own span: {@code UNIT n traceId spanId}. */
  record Unit(int n, String traceId, String spanId) { }

  final String name;
  final List<String> stdout;
  final List<String> stderr;
  final Map<String, Ran> ran = new LinkedHashMap<>();
  final Map<Integer, Unit> units = new LinkedHashMap<>();
  final List<ExportedSpan> spans;
  /** Wall time of the run, from start to exit. */
  final Duration took;

  private TracedRun(String name, List<String> stdout, List<String> stderr, Duration took) throws IOException {
    this.name = name;
    this.stdout = stdout;
    this.stderr = stderr;
    this.took = took;
    for (String l : stdout) {
      String[] p = l.split(" ");
      if (p[0].equals("RAN")) ran.put(p[1], new Ran(p[1], Boolean.parseBoolean(p[2]), Integer.parseInt(p[3])));
      if (p[0].equals("UNIT")) units.put(Integer.parseInt(p[1]), new Unit(Integer.parseInt(p[1]), p[2], p[3]));
    }
    this.spans = ExportedSpan.parse(stderr);
  }

  static String property(String name) {
    String v = System.getProperty(name);
    if (v == null) throw new IllegalStateException("system property " + name + " is not set (run through Maven Failsafe)");
    return v;
  }

  static String jar(String property) {
    String jar = property(property);
    assertTrue(new File(jar).isFile(), property + " not found: " + jar);
    return new File(jar).getAbsolutePath();
  }

  /** The OpenTelemetry agent's settings: spans as OTLP JSON on stderr, both database conventions. */
  static List<String> otelAgent(String jarProperty) {
    return List.of("-javaagent:" + jar(jarProperty),
        "-Dotel.service.name=traced-app",
        "-Dotel.traces.exporter=logging-otlp",
        "-Dotel.metrics.exporter=none",
        "-Dotel.logs.exporter=none",
        "-Dotel.semconv-stability.opt-in=database/dup",
        "-Dotel.bsp.schedule.delay=100");
  }

  /** {@link TracedApp} with {@code args}, with or without the OpenTelemetry API on its class path. */
  static List<String> tracedApp(boolean withApi, List<String> args) {
    List<String> launch = new ArrayList<>();
    launch.add("-cp");
    launch.add(property("app.classpath") + (withApi ? File.pathSeparator + property("otel.api.classpath") : ""));
    launch.add(TracedApp.class.getName());
    launch.addAll(args);
    return launch;
  }

  /**
   * Runs the application to its end. {@code onPause}, when the application pauses (its retry
   * scenario, or the Spring application once it is ready), runs before it is told to go on.
   */
  static TracedRun run(String name, List<String> jvmOptions, List<String> launch, Callable onPause)
      throws Exception {
    return run(name, jvmOptions, launch, onPause, null);
  }

  /** As above; {@code afterGo} runs once the application was told to go on. */
  static TracedRun run(String name, List<String> jvmOptions, List<String> launch, Callable onPause,
      Callable afterGo) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + "/bin/java");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.addAll(jvmOptions);
    cmd.addAll(launch);
    Path dir = Path.of("target", "otel-runs");
    Files.createDirectories(dir);
    Path out = dir.resolve(name + ".out");
    Path err = dir.resolve(name + ".err");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
    pb.environment().remove("JAVA_TOOL_OPTIONS");
    pb.environment().remove("OMNIUM_AGENT_ARGS");
    long start = System.nanoTime();
    Process p = pb.start();
    try {
      if (onPause != null) {
        Poll.until(RUN_TIMEOUT, name + " pauses", () -> {
          if (!p.isAlive()) throw new AssertionError(name + " ended before it paused\n" + transcript(out, err));
          return lines(out).contains("PAUSE");
        });
        onPause.call();
        OutputStream in = p.getOutputStream();
        in.write("go\n".getBytes(StandardCharsets.UTF_8));
        in.flush();
        if (afterGo != null) afterGo.call();
      }
      if (!p.waitFor(RUN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        throw new AssertionError(name + " did not finish within " + RUN_TIMEOUT + "\n" + transcript(out, err));
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertEquals(0, p.exitValue(), name + " failed\n" + transcript(out, err));
      TracedRun run = new TracedRun(name, lines(out), lines(err), took);
      assertTrue(run.stdout.contains("DONE"), name + " did not finish its work\n" + transcript(out, err));
      return run;
    } finally {
      if (p.isAlive()) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** A step of the test run while the application waits. */
  interface Callable {
    void call() throws Exception;
  }

  private static List<String> lines(Path f) throws IOException {
    return Files.exists(f) ? Files.readAllLines(f, StandardCharsets.UTF_8) : List.of();
  }

  private static String transcript(Path out, Path err) throws IOException {
    return "---- stdout ----\n" + String.join("\n", lines(out)) + "\n---- stderr (last 60 lines) ----\n"
        + String.join("\n", tail(lines(err), 60));
  }

  private static List<String> tail(List<String> l, int n) {
    return l.subList(Math.max(0, l.size() - n), l.size());
  }

  // ---------------------------------------------------------------- what the spans say

  /** The JDBC spans whose statement carries {@code tag} (a column alias). */
  List<ExportedSpan> spansOf(String tag) {
    List<ExportedSpan> found = new ArrayList<>();
    for (ExportedSpan s : spans) {
      String q = s.queryText();
      if (s.isJdbc() && q != null && q.matches("(?is).*\\bAS " + tag + "\\b.*")) found.add(s);
    }
    return found;
  }

  /**
   * JDBC spans of statements the application did not run: omnium's own. Left out: pgjdbc's empty
   * validation query, which the application's pool runs through {@code isValid()} on a connection
   * it lends again (plain pgjdbc's, or the primary session an omnium connection holds), as it does
   * with plain pgjdbc; and pgjdbc's {@code SHOW TRANSACTION ISOLATION LEVEL}, the answer to the
   * application pool's own {@code getTransactionIsolation()} at its start, which an omnium
   * connection holding a primary session asks that session for, exactly as pgjdbc does.
   */
  List<ExportedSpan> untagged() {
    List<ExportedSpan> found = new ArrayList<>();
    for (ExportedSpan s : spans) {
      String q = s.queryText();
      if (s.isJdbc() && !"".equals(q) && !"SHOW TRANSACTION ISOLATION LEVEL".equals(q)
          && (q == null || !q.matches("(?is).*\\bAS [rawxc][0-9]+[ab]?\\b.*"))) {
        found.add(s);
      }
    }
    return found;
  }

  String transcript() {
    return "---- " + name + " stdout ----\n" + String.join("\n", stdout)
        + "\n---- stderr (last 40 lines) ----\n" + String.join("\n", tail(stderr, 40));
  }
}
