package dev.omnium.jdbc;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

/** {@code check}'s text report for suites outside the driver's package. */
public final class CheckReport {
  private CheckReport() {
  }

  /** The report of {@code url}, its first line naming the exit status. */
  public static String of(String url) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    HealthCheck.run(url, new Properties(), false,
        new PrintStream(out, true, StandardCharsets.UTF_8));
    return out.toString(StandardCharsets.UTF_8);
  }
}
