package dev.omnium.sandbox;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A process the sandbox runs in front of its servers (a PgBouncer, an HAProxy): started like the
 * servers (as the unprivileged server user when the JVM is root), on a port picked free at run
 * time, in the foreground with its output in a log file of the cluster directory, stopped with
 * its cluster (also when a test failed, and by the shutdown hook), reaped by a later JVM when its
 * own was killed. Its configuration file lives in the cluster directory, so its command line names
 * the owner JVM (what {@code .ci/run}'s leftover check reads).
 */
public abstract class Sidecar implements AutoCloseable {
  /** Files of a sidecar's pid, in the cluster directory, for {@link #reapAll}. */
  private static final String PID_SUFFIX = ".sidecar-pid";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

  private final String name;
  private final Path dir;
  private final Path config;
  private final Path log;
  private final ServerUser user;
  private volatile int port;
  private volatile Process process;

  Sidecar(String name, Path dir, ServerUser user) {
    this.name = name;
    this.dir = dir;
    this.config = dir.resolve(name + "." + configSuffix());
    this.log = dir.resolve(name + ".log");
    this.user = user;
  }

  /** The file name suffix of the configuration file, e.g. {@code ini}. */
  abstract String configSuffix();

  /** The configuration for {@code port}. */
  abstract String configText(int port);

  /** The command line that runs it in the foreground with {@code config}. */
  abstract List<String> command(Path config);

  /** What the log says when the port was taken. */
  boolean portTaken(String logText) {
    return logText.contains("Address already in use") || logText.contains("cannot bind");
  }

  /** {@code defaultPath}, or what the environment variable {@code override} names. */
  static String binary(String override, String defaultPath) {
    String env = System.getenv(override);
    return env != null && !env.isBlank() ? env : defaultPath;
  }

  /** Starts it on a free port and waits until that port accepts connections. */
  final void start() {
    for (int attempt = 1; ; attempt++) {
      port = Ports.free();
      user.writeFile(config, configText(port));
      try {
        launch();
        return;
      } catch (PortTaken e) {
        if (attempt >= 5) throw new PgSandboxException(e.getMessage());
      }
    }
  }

  private void launch() {
    try {
      if (!Files.exists(log)) {
        Files.writeString(log, "");
        user.own(log);
      }
      ProcessBuilder pb = new ProcessBuilder(user.wrap(command(config)))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      pb.environment().keySet().removeIf(k -> k.startsWith("PG"));
      process = pb.start();
    } catch (IOException e) {
      throw new PgSandboxException("cannot start " + name + ": " + e, e);
    }
    try {
      Poll.until(START_TIMEOUT, name + " to accept connections on port " + port,
          () -> !process.isAlive() || accepting());
    } catch (PgSandboxException e) {
      stop();
      throw new PgSandboxException(e.getMessage() + "\n--- " + log + " ---\n"
          + FileTrees.tail(log, 30), e);
    }
    if (!process.isAlive()) {
      String text = FileTrees.readOrNote(log);
      if (portTaken(text)) throw new PortTaken(name + ": port " + port + " is in use");
      throw new PgSandboxException(name + " exited at start (exit " + process.exitValue()
          + ")\n--- " + log + " ---\n" + FileTrees.tail(log, 30));
    }
    writePid(); // once it listens: under runuser, the sidecar's own process exists by then
  }

  private boolean accepting() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** The pid of the process itself (under runuser when the JVM is root), for the reaper. */
  private void writePid() {
    List<ProcessHandle> tree = Procs.tree(process.pid());
    long pid = tree.get(tree.size() - 1).pid();
    try {
      Files.writeString(dir.resolve(name + PID_SUFFIX), Long.toString(pid));
    } catch (IOException e) {
      // the reaper then finds nothing to reap: close() and the shutdown hook still stop it
    }
  }

  /** @return its name in the cluster directory, e.g. {@code pgbouncer-primary} */
  final String name() {
    return name;
  }

  /** @return the TCP port it listens on, on 127.0.0.1 */
  public final int port() {
    return port;
  }

  /** @return e.g. "127.0.0.1:6432" */
  public final String hostPort() {
    return "127.0.0.1:" + port;
  }

  /** @return its log (its standard output and error); deleted with the cluster */
  public final Path logFile() {
    return log;
  }

  /** @return the log so far */
  public final String log() {
    return Files.exists(log) ? FileTrees.readOrNote(log) : "(no log)\n";
  }

  /** @return whether it runs */
  public final boolean running() {
    Process p = process;
    return p != null && p.isAlive();
  }

  /** Stops it (SIGTERM, then SIGKILL after 10 s) and every process it started. Idempotent. */
  final void stop() {
    Process p = process;
    if (p == null) return;
    List<ProcessHandle> tree = Procs.tree(p.pid());
    if (tree.isEmpty()) return; // ended already
    Procs.signal(tree, "CONT");
    // the sidecar itself first: runuser, its parent when the JVM is root, ends with it
    Procs.signal(tree.subList(tree.size() - 1, tree.size()), "TERM");
    if (!Procs.awaitExit(tree, Duration.ofSeconds(10))) {
      Procs.signal(tree, "KILL");
      Procs.awaitExit(tree, Duration.ofSeconds(5));
    }
    try {
      p.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public final void close() {
    stop();
  }

  @Override
  public String toString() {
    return name + "@" + hostPort();
  }

  /**
   * Kills the sidecars of a cluster directory whose owner JVM is gone (see {@link OrphanReaper}):
   * each pid file names a process, killed only when its command line still names this directory.
   */
  static void reapAll(Path clusterDir, String originalName) {
    try (DirectoryStream<Path> pids = Files.newDirectoryStream(clusterDir, "*" + PID_SUFFIX)) {
      for (Path f : pids) {
        long pid;
        try {
          pid = Long.parseLong(Files.readString(f, StandardCharsets.ISO_8859_1).trim());
        } catch (IOException | NumberFormatException e) {
          continue;
        }
        if (pid <= 1 || !Procs.alive(pid)
            || !Procs.commandLine(pid).contains("/" + originalName + "/")) {
          continue;
        }
        List<ProcessHandle> tree = Procs.tree(pid);
        Procs.signal(tree, "CONT");
        Procs.signal(tree, "KILL");
        Procs.awaitExit(tree, Duration.ofSeconds(5));
      }
    } catch (IOException e) {
      // nothing listed: nothing to reap
    }
  }

  /** The port was taken between picking it and binding it. */
  private static final class PortTaken extends PgSandboxException {
    PortTaken(String message) {
      super(message);
    }
  }
}
