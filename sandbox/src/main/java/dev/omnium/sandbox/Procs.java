package dev.omnium.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/** Process-tree helpers: liveness, descendants, signals. */
final class Procs {

  private Procs() {}

  /**
   * True while the process runs. Unlike {@link ProcessHandle#isAlive()} a zombie counts as dead:
   * a stopped postmaster is re-parented to init, and not every init reaps its zombies promptly.
   */
  static boolean alive(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"),
          StandardCharsets.ISO_8859_1);
      int close = stat.lastIndexOf(')');
      char state = close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
      return state != 'Z' && state != 'X';
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException e) {
      return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }
  }

  /**
   * True while this very process runs: {@link ProcessHandle#isAlive()} compares start times, so a
   * recycled pid (pid_max can be as low as 32768) does not count, and {@link #alive} excludes
   * zombies.
   */
  static boolean running(ProcessHandle p) {
    return p.isAlive() && alive(p.pid());
  }

  /** The process and all its descendants, the process itself first. */
  static List<ProcessHandle> tree(long pid) {
    List<ProcessHandle> all = new ArrayList<>();
    ProcessHandle.of(pid).ifPresent(p -> {
      all.add(p);
      p.descendants().forEach(all::add);
    });
    return all;
  }

  /** The first line of /proc/PID/cmdline with NULs as spaces, or "" when unreadable. */
  static String commandLine(long pid) {
    try {
      return Files.readString(Path.of("/proc/" + pid + "/cmdline"), StandardCharsets.ISO_8859_1)
          .replace('\0', ' ');
    } catch (IOException e) {
      return "";
    }
  }

  /**
   * True when the process is a postmaster started on this data directory (pg_ctl passes
   * {@code -D dir}, and the postmaster keeps its arguments). Guards against a stale postmaster.pid
   * whose pid now belongs to an unrelated process.
   */
  static boolean isPostmasterOf(long pid, String dataDirFragment) {
    String cmd = commandLine(pid) + " ";
    return cmd.contains("postgres") && cmd.contains(" -D ") && cmd.contains(dataDirFragment + " ");
  }

  /**
   * Sends a signal (STOP, CONT, QUIT, KILL, ...) with kill(1), which as root reaches any user's
   * processes. Never signals this JVM or its ancestors (such as the build tool that runs it).
   */
  static void signal(List<ProcessHandle> processes, String signal) {
    Set<Long> untouchable = new HashSet<>(List.of(0L, 1L));
    for (ProcessHandle p = ProcessHandle.current(); p != null; p = p.parent().orElse(null)) {
      untouchable.add(p.pid());
    }
    List<String> pids = processes.stream().filter(p -> !untouchable.contains(p.pid()))
        .filter(Procs::running)
        .map(p -> Long.toString(p.pid())).collect(Collectors.toList());
    if (pids.isEmpty()) {
      return;
    }
    List<String> cmd = new ArrayList<>(List.of("kill", "-" + signal));
    cmd.addAll(pids);
    // Some may have exited meanwhile: a partial failure is expected and harmless.
    ProcessRunner.run(cmd, Duration.ofSeconds(10));
  }

  /** Waits until none of the processes runs; false on timeout. */
  static boolean awaitExit(List<ProcessHandle> processes, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (ProcessHandle p : processes) {
      while (running(p)) {
        if (System.nanoTime() - deadline > 0) {
          return false;
        }
        try {
          Thread.sleep(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return true;
  }
}
