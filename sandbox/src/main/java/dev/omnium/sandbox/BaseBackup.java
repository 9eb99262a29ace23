package dev.omnium.sandbox;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;

/**
 * A base backup of a running server with the low-level API ({@code pg_backup_start} /
 * {@code pg_backup_stop}, PostgreSQL 15+; {@code pg_start_backup} / {@code pg_stop_backup} before)
 * and a file copy: what {@code pg_basebackup} does, with the two binaries the bundled server
 * packages ship ({@code pg_basebackup} and {@code pg_rewind} are not among them). The copy leaves
 * out what the documentation says a backup must not contain; the WAL it needs streams from the
 * source afterwards ({@code wal_keep_size} keeps it there).
 */
final class BaseBackup {
  /** Directories whose contents are not copied (the directories themselves are). */
  private static final Set<String> EMPTIED = Set.of("pg_wal", "pg_replslot", "pg_dynshmem",
      "pg_notify", "pg_serial", "pg_snapshots", "pg_stat_tmp", "pg_subtrans");
  /** Top-level files that are not copied. */
  private static final Set<String> SKIPPED = Set.of("postmaster.pid", "postmaster.opts",
      "standby.signal", "recovery.signal", "backup_label", "tablespace_map", "backup_label.old");

  private BaseBackup() {}

  /**
   * Copies the running server's data directory {@code from} into the empty or absent {@code to}
   * and writes its {@code backup_label}.
   *
   * @param source a superuser connection to the server whose data directory is {@code from}
   */
  static void take(Connection source, Path from, Path to, ServerUser user) {
    try {
      boolean modern = Integer.parseInt(Sql.one(source, "SHOW server_version_num")) >= 150000;
      Sql.one(source, modern ? "SELECT pg_backup_start('omnium-sandbox', true)"
          : "SELECT pg_start_backup('omnium-sandbox', true, false)");
      String label;
      try {
        copyTree(from, to);
      } finally {
        try (Statement st = source.createStatement(); ResultSet rs = st.executeQuery(modern
            ? "SELECT labelfile FROM pg_backup_stop(false)"
            : "SELECT labelfile FROM pg_stop_backup(false, false)")) {
          label = rs.next() ? rs.getString(1) : null;
        }
      }
      if (label == null) {
        throw new PgSandboxException("the base backup returned no backup_label");
      }
      Files.writeString(to.resolve("backup_label"), label);
      user.own(to);
    } catch (SQLException | IOException e) {
      throw new PgSandboxException("base backup of " + from + " failed: " + e, e);
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    Files.walkFileTree(from, new FileTrees.LiveTreeVisitor() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
          throws IOException {
        Path target = to.resolve(from.relativize(dir).toString());
        Path rel = from.relativize(dir);
        // pg_wal keeps its subdirectories (archive_status, summaries), empty; the others none.
        if (rel.getNameCount() >= 2 && EMPTIED.contains(rel.getName(0).toString())
            && !"pg_wal".equals(rel.getName(0).toString())) {
          return FileVisitResult.SKIP_SUBTREE;
        }
        Files.copy(dir, target, StandardCopyOption.COPY_ATTRIBUTES);
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Path rel = from.relativize(file);
        String name = rel.getFileName().toString();
        if ((rel.getNameCount() == 1 && SKIPPED.contains(name)) || name.startsWith("pgsql_tmp")
            || (rel.getNameCount() >= 2 && EMPTIED.contains(rel.getName(0).toString()))) {
          return FileVisitResult.CONTINUE;
        }
        try {
          Files.copy(file, to.resolve(rel.toString()), StandardCopyOption.COPY_ATTRIBUTES);
        } catch (NoSuchFileException gone) {
          // removed while we copied (a temporary file): WAL replay recreates what matters
        }
        return FileVisitResult.CONTINUE;
      }
    });
  }
}
