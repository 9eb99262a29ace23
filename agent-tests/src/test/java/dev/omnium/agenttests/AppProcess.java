package dev.omnium.agenttests;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One forked application JVM: stdout and stderr are collected line by line (never blocking the
 * child), {@link #close()} kills it (and its descendants) if it is still running.
 */
final class AppProcess implements AutoCloseable {
  static final String JAVA = System.getProperty("java.home") + "/bin/java";

  private final String name;
  private final Process process;
  private final List<String> out = new ArrayList<>();
  private final List<String> err = new ArrayList<>();
  private final Thread outPump;
  private final Thread errPump;

  private AppProcess(String name, Process process) {
    this.name = name;
    this.process = process;
    this.outPump = pump(process.getInputStream(), out, name + "-out");
    this.errPump = pump(process.getErrorStream(), err, name + "-err");
  }

  /** Starts {@code command}; {@code env} entries are added to (null values removed from) the environment. */
  static AppProcess start(String name, List<String> command, Map<String, String> env) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().remove("OMNIUM_AGENT_ARGS");
    pb.environment().remove("JAVA_TOOL_OPTIONS");
    pb.environment().remove("_JAVA_OPTIONS");
    if (env != null) {
      env.forEach((k, v) -> {
        if (v == null) pb.environment().remove(k);
        else pb.environment().put(k, v);
      });
    }
    return new AppProcess(name, pb.start());
  }

  private static Thread pump(InputStream in, List<String> sink, String threadName) {
    Thread t = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          synchronized (sink) {
            sink.add(line);
            sink.notifyAll();
          }
        }
      } catch (IOException ignored) {
        // the process is gone
      }
    }, threadName);
    t.setDaemon(true);
    t.start();
    return t;
  }

  long pid() {
    return process.pid();
  }

  /** Waits for a stdout line starting with {@code prefix} and returns it. */
  String awaitLine(String prefix, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (out) {
      while (true) {
        for (String l : out) {
          if (l.startsWith(prefix)) return l;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || (!process.isAlive() && !outPump.isAlive())) {
          throw new AssertionError(name + ": no line '" + prefix + "' within " + timeout + "\n" + transcript());
        }
        TimeUnit.NANOSECONDS.timedWait(out, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
      }
    }
  }

  void send(String line) throws IOException {
    OutputStream in = process.getOutputStream();
    in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    in.flush();
  }

  /** Waits for the exit; fails with the transcript when it takes longer than {@code timeout}. */
  int await(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError(name + " did not finish within " + timeout + "\n" + transcript());
    }
    outPump.join(5000);
    errPump.join(5000);
    return process.exitValue();
  }

  List<String> stdout() {
    synchronized (out) {
      return new ArrayList<>(out);
    }
  }

  List<String> stderr() {
    synchronized (err) {
      return new ArrayList<>(err);
    }
  }

  /** The WHERE lines printed so far. */
  List<Where> wheres() {
    return stdout().stream().filter(l -> l.startsWith("WHERE ")).map(Where::parse).collect(Collectors.toList());
  }

  /** stderr lines written by the agent (its own and the driver's inside it). */
  List<String> agentLines() {
    return stderr().stream().filter(l -> l.startsWith("[omnium-agent]")).collect(Collectors.toList());
  }

  String transcript() {
    return "---- " + name + " stdout ----\n" + String.join("\n", stdout())
        + "\n---- " + name + " stderr ----\n" + String.join("\n", stderr()) + "\n----";
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
