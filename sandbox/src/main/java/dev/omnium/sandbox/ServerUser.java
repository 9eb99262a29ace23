package dev.omnium.sandbox;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The operating-system user that runs the PostgreSQL processes. PostgreSQL refuses to run as
 * root, so a root JVM runs them as {@code postgres} (or {@code nobody}) via {@code runuser};
 * everyone else runs them as themselves.
 *
 * @param name the user name the servers run as
 * @param switching true when the JVM is root and commands are run through runuser
 * @param runuser the runuser executable when switching, else null
 */
record ServerUser(String name, boolean switching, String runuser) {

  private static volatile ServerUser current;

  static ServerUser current() {
    ServerUser u = current;
    if (u == null) {
      synchronized (ServerUser.class) {
        if (current == null) {
          current = detect();
        }
        u = current;
      }
    }
    return u;
  }

  /** Prefixes a command so that it runs as the server user. */
  List<String> wrap(List<String> command) {
    if (!switching) {
      return command;
    }
    List<String> wrapped = new ArrayList<>(List.of(runuser, "-u", name, "--"));
    wrapped.addAll(command);
    return wrapped;
  }

  /** Runs a command as the server user. */
  ProcessRunner.Result run(List<String> command, Duration timeout) {
    return ProcessRunner.run(wrap(command), timeout);
  }

  /** Runs a command as the server user, feeding it stdin. */
  ProcessRunner.Result run(List<String> command, Duration timeout, String stdin) {
    return ProcessRunner.run(wrap(command), timeout, stdin);
  }

  /** Hands a file or directory tree to the server user (no-op unless root). */
  void own(Path path) {
    if (!switching) {
      return;
    }
    try {
      UserPrincipal owner = path.getFileSystem().getUserPrincipalLookupService()
          .lookupPrincipalByName(name);
      Files.walkFileTree(path, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
            throws IOException {
          Files.setOwner(dir, owner);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.setOwner(file, owner);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      throw new PgSandboxException("cannot chown " + path + " to " + name + ": " + e, e);
    }
  }

  /** Writes a text file the server can read and later rewrite. */
  void writeFile(Path file, String content) {
    try {
      Files.writeString(file, content);
    } catch (IOException e) {
      throw new PgSandboxException("cannot write " + file + ": " + e, e);
    }
    own(file);
  }

  @Override
  public String toString() {
    return switching ? name + " (via runuser, JVM runs as root)" : name;
  }

  private static ServerUser detect() {
    String me = System.getProperty("user.name", "unknown");
    if (uid() != 0) {
      return new ServerUser(me, false, null);
    }
    String runuser = findRunuser();
    for (String candidate : List.of("postgres", "nobody")) {
      if (ProcessRunner.run(List.of("id", "-u", candidate), Duration.ofSeconds(10)).ok()) {
        return new ServerUser(candidate, true, runuser);
      }
    }
    throw new PgSandboxException("running as root, but neither user 'postgres' nor 'nobody'"
        + " exists to run PostgreSQL (it refuses to run as root); create one, e.g."
        + " useradd --system postgres");
  }

  /** The uid of the JVM, read from a file it creates (no native code needed). */
  static int uid() {
    try {
      Path probe = Files.createTempFile("omnium-uid", ".probe");
      try {
        return (Integer) Files.getAttribute(probe, "unix:uid");
      } finally {
        Files.deleteIfExists(probe);
      }
    } catch (IOException | UnsupportedOperationException e) {
      throw new PgSandboxException("cannot determine the user id of this JVM: " + e, e);
    }
  }

  private static String findRunuser() {
    for (String p : List.of("/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser",
        "/bin/runuser")) {
      if (Files.isExecutable(Path.of(p))) {
        return p;
      }
    }
    throw new PgSandboxException("running as root, but 'runuser' (util-linux) was not found;"
        + " PostgreSQL refuses to run as root and the sandbox needs runuser to drop privileges");
  }
}
