package dev.omnium.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/** Controls one server process tree: pg_ctl start/stop, postmaster pid, signals. */
final class PgServer {

  /** Thrown by {@link #start()} when the port was taken between picking it and binding it. */
  static final class PortTakenException extends PgSandboxException {
    PortTakenException(String message) {
      super(message);
    }
  }

  private static final Duration PG_CTL_TIMEOUT = Duration.ofSeconds(90);

  private final PgNode node;
  private final Path dataDir;
  private final PgBinaries bin;
  private final ServerUser user;
  private volatile boolean frozen;
  /** Wall-clock shift of the server's processes (libfaketime) from their next start; zero: none. */
  private volatile Duration clockOffset = Duration.ZERO;

  PgServer(PgNode node, Path dataDir, PgBinaries bin, ServerUser user) {
    this.node = node;
    this.dataDir = dataDir;
    this.bin = bin;
    this.user = user;
  }

  PgNode node() {
    return node;
  }

  Path dataDir() {
    return dataDir;
  }

  boolean frozen() {
    return frozen;
  }

  Duration clockOffset() {
    return clockOffset;
  }

  /** Takes effect at the next {@link #start()}. */
  void clockOffset(Duration offset) {
    this.clockOffset = offset;
  }

  /**
   * Starts the server and waits (pg_ctl -w) until it accepts connections; a standby counts once it
   * reached a consistent state. Throws {@link PortTakenException} when its port is in use.
   */
  void start() {
    long logOffset = logSize();
    ProcessRunner.Result r = user.run(FakeTime.wrap(clockOffset, List.of(bin.pgCtl(), "start",
        "-D", dataDir.toString(), "-l", node.logFile().toString(), "-w", "-t", "60", "-s")),
        PG_CTL_TIMEOUT);
    if (r.ok()) {
      return;
    }
    String log = logSince(logOffset);
    if (postmasterPid().isPresent()) {
      // pg_ctl gave up waiting but the server lives on: do not leak it.
      stop(true);
    }
    if (log.contains("could not bind") || log.contains("Address already in use")) {
      throw new PortTakenException(node + ": port " + node.port() + " is in use");
    }
    throw new PgSandboxException("cannot start " + node + " (" + bin.origin() + ", as user "
        + user + "): " + r.output().strip() + "\n--- " + node.logFile() + " ---\n" + log.strip());
  }

  /**
   * Stops the server (no-op when it is not running) and makes sure no process of it survives.
   * Sends what {@code pg_ctl stop -m immediate|fast} sends (SIGQUIT / SIGINT) but watches the
   * processes itself: pg_ctl polls in 100 ms steps and, as root, would need runuser.
   */
  void stop(boolean immediate) {
    OptionalLong pid = postmasterPid();
    if (pid.isEmpty()) {
      return;
    }
    List<ProcessHandle> tree = Procs.tree(pid.getAsLong());
    if (tree.isEmpty()) {
      return;
    }
    // A stopped process cannot act on the shutdown signal.
    Procs.signal(tree, "CONT");
    frozen = false;
    Procs.signal(tree.subList(0, 1), immediate ? "QUIT" : "INT");
    // The postmaster exits only after all its children did.
    Duration patience = Duration.ofSeconds(immediate ? 10 : 60);
    if (!Procs.awaitExit(tree, patience)) {
      Procs.signal(Procs.tree(pid.getAsLong()), "KILL");
      Procs.signal(tree, "KILL");
      Procs.awaitExit(tree, Duration.ofSeconds(5));
      // A killed postmaster leaves its lock file; its zombie pid would block the next start.
      FileTrees.deleteQuietly(dataDir.resolve("postmaster.pid"));
      if (!immediate) {
        throw new PgSandboxException(node + " did not shut down within " + patience.toSeconds()
            + " s; killed it\n--- " + node.logFile() + " ---\n" + FileTrees.tail(node.logFile(),
            20));
      }
    }
  }

  /** SIGSTOP the postmaster, then every child: the server no longer answers anything. */
  void freeze() {
    long pid = postmasterPid().orElseThrow(() -> new PgSandboxException(node + " is not running"));
    // Postmaster first, so that it cannot fork new children while we stop the existing ones.
    Procs.signal(List.of(ProcessHandle.of(pid).orElseThrow()), "STOP");
    Procs.signal(Procs.tree(pid), "STOP");
    frozen = true;
  }

  /** SIGCONT every process of the server. */
  void thaw() {
    postmasterPid().ifPresent(pid -> {
      List<ProcessHandle> tree = Procs.tree(pid);
      if (tree.isEmpty()) {
        return;
      }
      List<ProcessHandle> childrenFirst = new ArrayList<>(tree.subList(1, tree.size()));
      childrenFirst.add(tree.get(0));
      Procs.signal(childrenFirst, "CONT");
    });
    frozen = false;
  }

  /** The postmaster pid from the first line of postmaster.pid, when that process is alive. */
  OptionalLong postmasterPid() {
    return postmasterPid(dataDir);
  }

  static OptionalLong postmasterPid(Path dataDir) {
    try {
      List<String> lines = Files.readAllLines(dataDir.resolve("postmaster.pid"),
          StandardCharsets.ISO_8859_1);
      if (lines.isEmpty()) {
        return OptionalLong.empty();
      }
      long pid = Long.parseLong(lines.get(0).trim());
      return Procs.alive(pid) && Procs.isPostmasterOf(pid, dataDir.toString())
          ? OptionalLong.of(pid) : OptionalLong.empty();
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  private long logSize() {
    try {
      return Files.size(node.logFile());
    } catch (IOException e) {
      return 0;
    }
  }

  private String logSince(long offset) {
    try {
      byte[] all = Files.readAllBytes(node.logFile());
      int from = (int) Math.min(offset, all.length);
      return new String(all, from, all.length - from, StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }
}
