package dev.omnium.sandbox;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs external commands (initdb, pg_ctl, cp, kill) with a timeout and captures their output. */
final class ProcessRunner {

  /** Outcome of one command: exit code and merged stdout/stderr. */
  record Result(List<String> command, int exitCode, String output) {
    boolean ok() {
      return exitCode == 0;
    }

    Result orThrow(String what) {
      if (!ok()) {
        throw new PgSandboxException(what + " failed (exit " + exitCode + "): "
            + String.join(" ", command) + "\n" + output.strip());
      }
      return this;
    }
  }

  private ProcessRunner() {}

  static Result run(List<String> command, Duration timeout) {
    return run(command, timeout, null);
  }

  /**
   * Runs a command to completion. Output goes to a temporary file rather than a pipe because
   * pg_ctl starts a daemon: had the daemon inherited a pipe, reading it to EOF would never end.
   */
  static Result run(List<String> command, Duration timeout, String stdin) {
    Path out = null;
    try {
      out = Files.createTempFile("omnium-pg-cmd", ".out");
      ProcessBuilder pb = new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(out.toFile());
      cleanEnvironment(pb.environment());
      if (stdin == null) {
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      }
      Process p = pb.start();
      if (stdin != null) {
        try (var in = p.getOutputStream()) {
          in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
      }
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        p.waitFor(5, TimeUnit.SECONDS);
        throw new PgSandboxException("timed out after " + timeout.toMillis() + " ms: "
            + String.join(" ", command) + "\n" + Files.readString(out).strip());
      }
      return new Result(command, p.exitValue(), Files.readString(out));
    } catch (IOException e) {
      throw new PgSandboxException("cannot run " + String.join(" ", command) + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PgSandboxException("interrupted while running " + String.join(" ", command), e);
    } finally {
      if (out != null) {
        try {
          Files.deleteIfExists(out);
        } catch (IOException ignored) {
          // a leftover temp file is harmless
        }
      }
    }
  }

  /** libpq variables from the caller's shell would redirect pg_ctl/initdb to another server. */
  private static void cleanEnvironment(Map<String, String> env) {
    env.keySet().removeIf(k -> k.startsWith("PG"));
    env.put("LC_ALL", "C");
    env.put("LANG", "C");
  }
}
