package dev.omnium.sandbox;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses durations written like {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} or plain
 * milliseconds.
 */
final class Durations {

  private static final Pattern FORM = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?");

  private Durations() {}

  static Duration parse(String text) {
    Matcher m = FORM.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("not a duration: '" + text
          + "' (use e.g. 500ms, 30s, 2m, 1h or plain milliseconds)");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "ms" : m.group(2);
    switch (unit) {
      case "s":
        return Duration.ofSeconds(n);
      case "m":
        return Duration.ofMinutes(n);
      case "h":
        return Duration.ofHours(n);
      default:
        return Duration.ofMillis(n);
    }
  }
}
