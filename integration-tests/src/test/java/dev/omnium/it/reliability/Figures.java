package dev.omnium.it.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The figures a suite reports (reads per route, faults injected, violations, worst staleness…):
 * printed as one line and appended to {@code target/reliability-figures.txt}, which
 * {@code docs/reliability.md} quotes.
 */
public final class Figures {
  private final String suite;
  private final Map<String, Object> values = new LinkedHashMap<>();

  public Figures(String suite) {
    this.suite = suite;
  }

  public Figures put(String key, Object value) {
    values.put(key, value);
    return this;
  }

  Object get(String key) {
    return values.get(key);
  }

  /** Prints and records the figures; returns the line. */
  public String report() {
    StringBuilder b = new StringBuilder("FIGURES ").append(suite).append(':');
    values.forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
    String line = b.toString();
    System.out.println(line);
    Path file = Path.of(System.getProperty("omnium.figures", "target/reliability-figures.txt"));
    try {
      Files.writeString(file, Instant.now() + " " + line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      System.out.println("(figures not written to " + file + ": " + e + ")");
    }
    return line;
  }
}
