package dev.omnium.conformance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Appends every unexplained difference to {@code target/conformance-mismatches.tsv} (mode,
 * scenario, key, pgjdbc's value, omnium's value), for triage.
 */
final class Mismatches {
  private static final Path FILE = Path.of("target", "conformance-mismatches.tsv");

  private Mismatches() { }

  static synchronized void record(Comparison.Result r) {
    if (r.raw().isEmpty()) {
      return;
    }
    try {
      Files.write(FILE, r.raw(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      System.err.println("[conformance] cannot write " + FILE + ": " + e);
    }
  }
}
