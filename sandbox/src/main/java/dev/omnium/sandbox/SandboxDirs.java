package dev.omnium.sandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

/**
 * Where the sandbox keeps unpacked binaries, cached data-directory templates and running clusters.
 * Everything lives under {@code java.io.tmpdir} (normally /tmp), not under the home directory: when
 * the JVM is root, the unprivileged server user must traverse these paths, and root's home is 0700.
 * Directories are per JVM user so that different users never fight over ownership.
 */
final class SandboxDirs {

  private SandboxDirs() {}

  /** Root of cached, unpacked PostgreSQL distributions, one subdirectory per version. */
  static Path binCache() {
    return FileTrees.mkdirs(tmp().resolve("omnium-pg-bin-" + userTag()), "rwxr-xr-x");
  }

  /** Root of templates and cluster directories. */
  static Path base() {
    return FileTrees.mkdirs(tmp().resolve("omnium-pg-" + userTag()), "rwxr-xr-x");
  }

  private static Path tmp() {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir", "/tmp")).toAbsolutePath();
    if (ServerUser.current().switching() && !worldTraversable(tmp)) {
      // The server user could not reach anything below a private tmpdir: /tmp always works.
      return Path.of("/tmp");
    }
    return tmp;
  }

  private static boolean worldTraversable(Path dir) {
    try {
      for (Path p = dir; p != null; p = p.getParent()) {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
        if (!perms.contains(PosixFilePermission.OTHERS_EXECUTE)) {
          return false;
        }
      }
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  private static String userTag() {
    return System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
  }
}
