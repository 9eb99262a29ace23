package dev.omnium.sandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * libfaketime (Debian package {@code faketime}): preloaded into a server's processes, it shifts
 * their wall clock by a fixed offset, so tests can run a node whose clock is ahead or behind.
 * Only the wall clock moves: the monotonic clock stays real, so the server's own timeouts keep
 * working.
 */
public final class FakeTime {

  private static final List<Path> CANDIDATES = List.of(
      Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
      Path.of("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"),
      Path.of("/usr/lib/faketime/libfaketime.so.1"),
      Path.of("/usr/local/lib/faketime/libfaketime.so.1"));
  private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(5);

  private static volatile Path library;
  private static volatile String unavailable;

  private FakeTime() {}

  /**
   * Whether servers can be started with a shifted clock. When libfaketime is missing and the JVM
   * runs as root, installs it once through apt-get (as CI does).
   *
   * @return true when {@link #library()} is usable
   */
  public static synchronized boolean available() {
    if (library != null) {
      return true;
    }
    if (unavailable != null) {
      return false;
    }
    Path found = find();
    if (found == null && ServerUser.current().switching()) {
      ProcessRunner.Result r = ProcessRunner.run(List.of("sh", "-c",
          "command -v apt-get >/dev/null || exit 3; apt-get install -y -q faketime"
              + " || (apt-get update -q && apt-get install -y -q faketime)"), INSTALL_TIMEOUT);
      found = find();
      if (found == null) {
        unavailable = "libfaketime is not installed and apt-get install faketime failed (exit "
            + r.exitCode() + "): " + tail(r.output());
      }
    } else if (found == null) {
      unavailable = "libfaketime is not installed (apt-get install faketime, as root) and this"
          + " JVM is not root, so it cannot install it";
    }
    library = found;
    return found != null;
  }

  /** @return why {@link #available()} is false, or null when it is true */
  public static String unavailableReason() {
    return available() ? null : unavailable;
  }

  /** @return the preload library, when {@link #available()} */
  static Path library() {
    if (!available()) {
      throw new PgSandboxException("cannot shift a server's clock: " + unavailable);
    }
    return library;
  }

  /**
   * The command prefix that runs {@code command} with its wall clock shifted by {@code offset}.
   *
   * @param offset positive: the clock is ahead of real time
   * @param command the command to run
   * @return the command itself when the offset is zero
   */
  static List<String> wrap(Duration offset, List<String> command) {
    if (offset.isZero()) {
      return command;
    }
    List<String> wrapped = new ArrayList<>(List.of("env", "LD_PRELOAD=" + library(),
        "FAKETIME=" + spec(offset), "FAKETIME_DONT_FAKE_MONOTONIC=1", "FAKETIME_NO_CACHE=1"));
    wrapped.addAll(command);
    return wrapped;
  }

  /** libfaketime's relative offset: signed seconds, e.g. {@code +3.000} or {@code -30.250}. */
  static String spec(Duration offset) {
    long ms = offset.toMillis();
    String abs = String.format(Locale.ROOT, "%d.%03d", Math.abs(ms) / 1000,
        Math.abs(ms) % 1000);
    return (ms < 0 ? "-" : "+") + abs;
  }

  private static Path find() {
    for (Path p : CANDIDATES) {
      if (Files.isReadable(p)) {
        return p;
      }
    }
    return null;
  }

  private static String tail(String output) {
    String s = output.strip();
    return s.length() <= 300 ? s : "..." + s.substring(s.length() - 300);
  }
}
