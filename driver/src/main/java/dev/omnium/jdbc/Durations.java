package dev.omnium.jdbc;

import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one duration syntax of every omnium key: {@code 250ms}, {@code 5s}, {@code 2m},
 * {@code 1h}, or plain milliseconds {@code 1500}. Decimals are allowed while the result is a
 * whole number of milliseconds ({@code 1.5s}); units are lower case, as in postgresql.conf.
 * Millisecond resolution because that is what the server settings and HikariCP take.
 */
final class Durations {

  static final String EXPECTED = OmniumProperty.Kind.DURATION.expected;

  private static final Pattern FORM = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ms|s|m|h)?");
  private static final BigDecimal MAX_MS = BigDecimal.valueOf(Long.MAX_VALUE);

  private Durations() {
  }

  /**
   * Parses {@code value} for {@code key}; zero is accepted here (callers decide whether
   * zero means "disabled" or is an error).
   *
   * @throws SQLException SQLState 08001, naming the key and the accepted form
   */
  static Duration parse(String key, String value) throws SQLException {
    if (value == null || value.trim().isEmpty()) {
      throw OmniumProperty.invalidValue(key, value == null ? "" : value,
          "empty; expected " + EXPECTED);
    }
    String v = value.trim();
    Matcher m = FORM.matcher(v);
    if (!m.matches()) {
      String detail = v.startsWith("-") ? "must not be negative; expected " + EXPECTED
          : "expected " + EXPECTED;
      throw OmniumProperty.invalidValue(key, value, detail);
    }
    BigDecimal ms = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unitMillis(m.group(2))));
    if (ms.compareTo(MAX_MS) > 0) {
      throw OmniumProperty.invalidValue(key, value, "too large; expected " + EXPECTED);
    }
    BigDecimal whole = ms.stripTrailingZeros();
    if (whole.scale() > 0) {
      throw OmniumProperty.invalidValue(key, value,
          "finer than a millisecond; expected " + EXPECTED);
    }
    return Duration.ofMillis(whole.longValueExact());
  }

  /** Milliseconds with unit, e.g. {@code 5000ms}: exact, and parseable again by {@link #parse}. */
  static String format(Duration d) {
    return d == null ? "unset" : d.toMillis() + "ms";
  }

  private static long unitMillis(String unit) {
    if (unit == null || unit.equals("ms")) {
      return 1L;
    }
    switch (unit) {
      case "s":
        return 1_000L;
      case "m":
        return 60_000L;
      default:
        return 3_600_000L; // "h", the only other unit FORM admits
    }
  }
}
