package dev.omnium.sandbox;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;

/** Unpacks a {@code .txz} (tar + xz) keeping mode bits and symbolic links. */
final class TxzArchive {

  private TxzArchive() {}

  static void extract(InputStream txz, Path target) throws IOException {
    Path root = target.toAbsolutePath().normalize();
    List<Path> dirs = new ArrayList<>();
    try (TarArchiveInputStream tar = new TarArchiveInputStream(
        new XZCompressorInputStream(new BufferedInputStream(txz, 1 << 16)))) {
      TarArchiveEntry e;
      while ((e = tar.getNextEntry()) != null) {
        Path dest = root.resolve(e.getName()).normalize();
        if (!dest.startsWith(root)) {
          throw new IOException("archive entry escapes the target directory: " + e.getName());
        }
        if (e.isDirectory()) {
          Files.createDirectories(dest);
          dirs.add(dest);
          continue;
        }
        Files.createDirectories(dest.getParent());
        if (e.isSymbolicLink()) {
          Files.deleteIfExists(dest);
          Files.createSymbolicLink(dest, Path.of(e.getLinkName()));
        } else if (e.isLink()) {
          Files.deleteIfExists(dest);
          Files.createLink(dest, root.resolve(e.getLinkName()).normalize());
        } else if (e.isFile()) {
          Files.copy(tar, dest, StandardCopyOption.REPLACE_EXISTING);
          Files.setPosixFilePermissions(dest, readable(e.getMode()));
        }
      }
    }
    // Directories last: a read-only directory mode set early would block its own extraction.
    for (Path d : dirs) {
      Files.setPosixFilePermissions(d, readable(0755));
    }
  }

  /**
   * Tar mode bits, plus read for everyone (and traverse where executable): the server user must
   * reach them.
   */
  private static Set<PosixFilePermission> readable(int mode) {
    Set<PosixFilePermission> p = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] order = {
      PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
      PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE,
      PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
      PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
      PosixFilePermission.OWNER_READ
    };
    for (int bit = 0; bit < order.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        p.add(order[bit]);
      }
    }
    p.remove(PosixFilePermission.GROUP_WRITE);
    p.remove(PosixFilePermission.OTHERS_WRITE);
    p.add(PosixFilePermission.OWNER_READ);
    p.add(PosixFilePermission.OWNER_WRITE);
    p.add(PosixFilePermission.GROUP_READ);
    p.add(PosixFilePermission.OTHERS_READ);
    if (p.contains(PosixFilePermission.OWNER_EXECUTE)) {
      p.add(PosixFilePermission.GROUP_EXECUTE);
      p.add(PosixFilePermission.OTHERS_EXECUTE);
    }
    return p;
  }
}
