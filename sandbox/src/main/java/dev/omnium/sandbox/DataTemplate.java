package dev.omnium.sandbox;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A cleanly shut-down data directory, made once per PostgreSQL version and user by initdb and
 * holding the {@code omnium} database. Copying it is ten times faster than running initdb, which is
 * what makes a cluster start in about a second. Never modified after creation.
 */
final class DataTemplate {

  /** Bump when what goes into a template changes, so old caches are not reused. */
  private static final String FORMAT = "v6";
  private static final long WAL_SEGMENT = 1 << 20;
  private static final long SEGMENTS_PER_XLOGID = 0x1_0000_0000L / WAL_SEGMENT;
  private static final Duration INITDB_TIMEOUT = Duration.ofMinutes(3);

  private DataTemplate() {}

  /**
   * Since PostgreSQL 15 CREATE DATABASE copies through WAL by default, which would leave 8 MB of
   * WAL in the template for every node to copy; FILE_COPY writes almost none.
   */
  private static String createDatabase(PgBinaries bin) {
    int major = Integer.parseInt(bin.version().split("\\.")[0]);
    return "CREATE DATABASE omnium" + (major >= 15 ? " STRATEGY = FILE_COPY" : "") + ";\n";
  }

  /** The template's data directory, created on first use. */
  static synchronized Path get(PgBinaries bin, ServerUser user) {
    Path base = SandboxDirs.base();
    String key = FORMAT + "-" + bin.version() + "-" + user.name() + "-"
        + Integer.toHexString(bin.dir().toString().hashCode());
    Path dir = base.resolve("template-" + key);
    Path data = dir.resolve("data");
    if (Files.exists(data.resolve("PG_VERSION"))) {
      return data;
    }
    dropOutdated(base);
    Path tmp = null;
    try {
      tmp = Files.createTempDirectory(base, ".tmp-template-");
      make(bin, user, tmp);
      try {
        Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
        tmp = null;
      } catch (FileAlreadyExistsException | DirectoryNotEmptyException lostRace) {
        // Another JVM made the same template first.
      }
      return data;
    } catch (IOException e) {
      throw new PgSandboxException("cannot create the data directory template in " + base
          + ": " + e, e);
    } finally {
      if (tmp != null) {
        FileTrees.deleteQuietly(tmp);
      }
    }
  }

  /**
   * A template made for one cluster alone, under {@code dir} (which the cluster deletes): its own
   * initdb, so its system identifier differs from the shared template's. Every cluster copied
   * from the shared template has the same identifier, as clusters restored from one backup do.
   */
  static Path own(PgBinaries bin, ServerUser user, Path dir) {
    try {
      make(bin, user, dir);
    } catch (IOException e) {
      throw new PgSandboxException("cannot create a data directory in " + dir + ": " + e, e);
    }
    return dir.resolve("data");
  }

  /** initdb into {@code dir}/data, then the omnium database, with trimmed WAL. */
  private static void make(PgBinaries bin, ServerUser user, Path dir) throws IOException {
    FileTrees.mkdirs(dir, "rwxr-xr-x");
    user.own(dir);
    Path tmpData = dir.resolve("data");
    user.run(List.of(bin.initdb(), "-D", tmpData.toString(), "-U", "postgres",
        "--auth=trust", "-E", "UTF8", "--no-locale", "-N",
        // 1 MB instead of 16 MB WAL segments: less to copy for every node of every cluster.
        "--wal-segsize=1"), INITDB_TIMEOUT)
        .orThrow("initdb (as " + user + ")");
    // Single-user mode needs no port or socket, so nothing can collide with other servers.
    List<String> single = new ArrayList<>(List.of(bin.postgres(), "--single", "-D",
        tmpData.toString(), "-F"));
    // pg_control records these values from the last run, and a standby refuses to start
    // with lower ones. Recording the minimum lets clusters configure any value.
    for (String setting : List.of("wal_level=replica", "max_connections=1",
        "superuser_reserved_connections=0", "max_worker_processes=0", "max_wal_senders=0",
        "max_prepared_transactions=0", "max_locks_per_transaction=10")) {
      single.add("-c");
      single.add(setting);
    }
    single.add("postgres");
    ProcessRunner.Result r = user.run(single, INITDB_TIMEOUT, createDatabase(bin));
    if (!r.ok() || r.output().contains("ERROR:") || r.output().contains("FATAL:")) {
      throw new PgSandboxException("creating database omnium in single-user mode failed:\n"
          + r.output().strip());
    }
    trimWal(tmpData);
  }

  /**
   * Deletes WAL segments that the template's shutdown checkpoint no longer needs (initdb leaves
   * several recycled ones), so every node copies less. The checkpoint location is read from
   * pg_control (its 5th field, stable for many releases); when anything looks unexpected, the WAL
   * is left as it is.
   */
  private static void trimWal(Path data) throws IOException {
    byte[] control = Files.readAllBytes(data.resolve("global/pg_control"));
    if (control.length < 40) {
      return;
    }
    long checkpoint = ByteBuffer.wrap(control, 32, 8)
        .order(ByteOrder.LITTLE_ENDIAN).getLong();
    long segment = checkpoint / WAL_SEGMENT;
    String keep = segmentName(segment);
    String keepNext = segmentName(segment + 1); // in case the checkpoint record crosses over
    Path wal = data.resolve("pg_wal");
    if (!Files.exists(wal.resolve("00000001" + keep))) {
      return;
    }
    try (var files = Files.list(wal)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        String name = f.getFileName().toString();
        if (name.matches("[0-9A-F]{24}") && !name.endsWith(keep) && !name.endsWith(keepNext)) {
          Files.delete(f);
        }
      }
    }
  }

  private static String segmentName(long segment) {
    return String.format("%08X%08X", segment / SEGMENTS_PER_XLOGID, segment % SEGMENTS_PER_XLOGID);
  }

  /** Templates of an older format are never used again; give a running old sandbox an hour. */
  private static void dropOutdated(Path base) {
    try (var dirs = Files.list(base)) {
      for (Path d : (Iterable<Path>) dirs::iterator) {
        String name = d.getFileName().toString();
        if (name.startsWith("template-") && !name.startsWith("template-" + FORMAT + "-")
            && Files.getLastModifiedTime(d).toInstant()
                .isBefore(Instant.now().minus(Duration.ofHours(1)))) {
          FileTrees.deleteQuietly(d);
        }
      }
    } catch (IOException ignored) {
      // only housekeeping
    }
  }
}
