package dev.omnium.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;

/** Small file-system helpers the JDK lacks. */
final class FileTrees {

  private FileTrees() {}

  /**
   * Walks a tree that a running (or exiting) server still changes: a file that vanished between
   * listing and visiting is passed over; any other failure stops the walk.
   */
  abstract static class LiveTreeVisitor extends SimpleFileVisitor<Path> {
    @Override
    public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
      if (exc instanceof NoSuchFileException) {
        return FileVisitResult.CONTINUE;
      }
      throw exc;
    }
  }

  /** Deletes a tree, tolerating files that vanish meanwhile (a server may still be exiting). */
  static void delete(Path root) throws IOException {
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    Files.walkFileTree(root, new LiveTreeVisitor() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Files.deleteIfExists(file);
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
        Files.deleteIfExists(dir);
        return FileVisitResult.CONTINUE;
      }
    });
  }

  /** Deletes a tree, ignoring failure: used on cleanup paths that must not mask the real error. */
  static void deleteQuietly(Path root) {
    try {
      delete(root);
    } catch (IOException ignored) {
      // best effort
    }
  }

  /** Creates a directory (and parents) and sets its mode, e.g. "rwxr-xr-x". */
  static Path mkdirs(Path dir, String mode) {
    try {
      Files.createDirectories(dir);
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
      return dir;
    } catch (IOException e) {
      throw new PgSandboxException("cannot create directory " + dir + ": " + e, e);
    }
  }

  /** Reads a file, or returns a placeholder when it cannot be read. */
  static String readOrNote(Path file) {
    try {
      return Files.readString(file, StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      return "(cannot read " + file + ": " + e + ")\n";
    }
  }

  /** The last {@code lines} lines of a file, for error messages. */
  static String tail(Path file, int lines) {
    String s = readOrNote(file);
    String[] all = s.split("\n", -1);
    int from = Math.max(0, all.length - lines - 1);
    return String.join("\n", Arrays.copyOfRange(all, from, all.length)).strip();
  }
}
