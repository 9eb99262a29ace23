package dev.omnium.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;

/**
 * Stops servers left behind by a JVM that was killed before it could close its clusters. Each
 * cluster directory records its owner JVM (pid and start time, which guards against pid reuse);
 * any JVM starting a cluster reaps the directories whose owner is gone.
 */
final class OrphanReaper {

  static final String OWNER_FILE = "owner.properties";
  private static final String CLAIM_PREFIX = ".reap-";
  private static final Duration STALE_TEMP = Duration.ofMinutes(30);

  private OrphanReaper() {}

  /** Marks a fresh cluster directory as owned by this JVM. */
  static void claim(Path clusterDir) {
    ProcessHandle me = ProcessHandle.current();
    Properties p = new Properties();
    p.setProperty("pid", Long.toString(me.pid()));
    p.setProperty("started", me.info().startInstant().map(i -> Long.toString(i.toEpochMilli()))
        .orElse("0"));
    try (var out = Files.newBufferedWriter(clusterDir.resolve(OWNER_FILE))) {
      p.store(out, "omnium sandbox cluster owner");
    } catch (IOException e) {
      throw new PgSandboxException("cannot write " + clusterDir.resolve(OWNER_FILE) + ": " + e, e);
    }
  }

  /** Reaps every orphaned cluster under {@code base}. Never throws: reaping is a courtesy. */
  static void reapAll(Path base) {
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(base)) {
      for (Path dir : dirs) {
        try {
          reapIfOrphaned(dir);
        } catch (Exception e) {
          System.err.println("[omnium-sandbox] could not reap " + dir + ": " + e);
        }
      }
    } catch (IOException e) {
      System.err.println("[omnium-sandbox] could not scan " + base + " for orphans: " + e);
    }
  }

  private static void reapIfOrphaned(Path dir) throws IOException {
    String name = dir.getFileName().toString();
    if (name.startsWith(CLAIM_PREFIX)) {
      // A reaper that died half-way: finish its work if it is gone.
      long reaper = Long.parseLong(name.substring(CLAIM_PREFIX.length()).split("-", 2)[0]);
      if (!Procs.alive(reaper) || olderThan(dir, STALE_TEMP)) {
        reap(dir);
      }
      return;
    }
    if (name.startsWith(".tmp-")) {
      if (olderThan(dir, STALE_TEMP)) {
        FileTrees.deleteQuietly(dir);
      }
      return;
    }
    Path owner = dir.resolve(OWNER_FILE);
    if (!Files.isRegularFile(owner) || ownerAlive(owner)) {
      return;
    }
    // Renaming claims the directory atomically: of several racing JVMs exactly one reaps it.
    Path claimed = dir.resolveSibling(CLAIM_PREFIX + ProcessHandle.current().pid() + "-" + name);
    try {
      Files.move(dir, claimed, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException someoneElse) {
      return;
    }
    reap(claimed);
  }

  /**
   * Immediate shutdown (SIGQUIT, what pg_ctl -m immediate sends) of every server in the directory,
   * then delete it.
   */
  private static void reap(Path clusterDir) throws IOException {
    String name = clusterDir.getFileName().toString();
    // The servers were started on the directory's original name, before it was claimed.
    String original = name.startsWith(CLAIM_PREFIX) ? name.split("-", 3)[2] : name;
    // its PgBouncers and HAProxies first: they would reconnect to the servers going down
    Sidecar.reapAll(clusterDir, original);
    try (DirectoryStream<Path> nodes = Files.newDirectoryStream(clusterDir, Files::isDirectory)) {
      for (Path data : nodes) {
        OptionalLong pid = postmasterPid(data);
        if (pid.isEmpty()
            || !Procs.isPostmasterOf(pid.getAsLong(), "/" + original + "/" + data.getFileName())) {
          continue;
        }
        List<ProcessHandle> tree = Procs.tree(pid.getAsLong());
        Procs.signal(tree, "CONT"); // it may have been frozen
        Procs.signal(tree.subList(0, 1), "QUIT");
        if (!Procs.awaitExit(tree, Duration.ofSeconds(5))) {
          Procs.signal(tree, "KILL");
          Procs.awaitExit(tree, Duration.ofSeconds(5));
        }
      }
    }
    FileTrees.delete(clusterDir);
  }

  private static boolean ownerAlive(Path ownerFile) {
    Properties p = new Properties();
    try (var in = Files.newBufferedReader(ownerFile)) {
      p.load(in);
      long pid = Long.parseLong(p.getProperty("pid", "-1"));
      long started = Long.parseLong(p.getProperty("started", "0"));
      if (!Procs.alive(pid)) {
        return false;
      }
      Optional<Instant> actual = ProcessHandle.of(pid).flatMap(h -> h.info().startInstant());
      // Same pid but a different start time: the pid was reused, the owner is gone.
      return started == 0 || actual.isEmpty()
          || Math.abs(actual.get().toEpochMilli() - started) < 1000;
    } catch (IOException | RuntimeException e) {
      return true; // unreadable: leave it alone rather than kill someone's servers
    }
  }

  /** The pid in postmaster.pid when that process runs; its identity is checked by the caller. */
  private static OptionalLong postmasterPid(Path data) {
    try {
      List<String> lines = Files.readAllLines(data.resolve("postmaster.pid"),
          StandardCharsets.ISO_8859_1);
      long pid = lines.isEmpty() ? -1 : Long.parseLong(lines.get(0).trim());
      return pid > 1 && Procs.alive(pid) ? OptionalLong.of(pid) : OptionalLong.empty();
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  private static boolean olderThan(Path p, Duration age) {
    try {
      FileTime t = Files.getLastModifiedTime(p);
      return t.toInstant().isBefore(Instant.now().minus(age));
    } catch (IOException e) {
      return false;
    }
  }
}
