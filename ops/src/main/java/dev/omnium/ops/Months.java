package dev.omnium.ops;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Months and range bounds. Month boundaries are midnight UTC on the first of the month, whatever
 * the column type: a {@code timestamptz} bound is written with its offset ({@code +00}), a
 * {@code date} or {@code timestamp} bound without one.
 */
final class Months {
  /** The column types a month or delete rule accepts, as {@code format_type} names them. */
  enum ColumnType {
    DATE("date"), TIMESTAMP("timestamp without time zone"), TIMESTAMPTZ("timestamp with time zone");

    final String sqlName;

    ColumnType(String sqlName) {
      this.sqlName = sqlName;
    }

    static ColumnType of(String formatType) {
      String plain = formatType.replaceAll("\\(\\d+\\)", ""); // timestamp(3) with time zone
      for (ColumnType t : values()) {
        if (plain.equals(t.sqlName)) {
          return t;
        }
      }
      return null;
    }

    /** The SQL literal of midnight (UTC) at the start of {@code day}, for this column type. */
    String literal(LocalDate day) {
      switch (this) {
        case DATE:
          return "'" + day + "'";
        case TIMESTAMP:
          return "'" + day + " 00:00:00'";
        default:
          return "'" + day + " 00:00:00+00'";
      }
    }

    /** A JDBC parameter for midnight (UTC) at the start of {@code day}. */
    Object parameter(LocalDate day) {
      switch (this) {
        case DATE:
          return day;
        case TIMESTAMP:
          return day.atStartOfDay();
        default:
          return day.atStartOfDay().atOffset(ZoneOffset.UTC);
      }
    }
  }

  private static final DateTimeFormatter SUFFIX = DateTimeFormatter.ofPattern("uuuu_MM",
      Locale.ROOT);
  /** A bound literal as PostgreSQL prints it with DateStyle ISO: date, time, offset. */
  private static final Pattern BOUND = Pattern.compile(
      "(\\d{4,})-(\\d{2})-(\\d{2})(?:[ T](\\d{2}):(\\d{2}):(\\d{2})(\\.\\d+)?)?"
      + "(?:([+-])(\\d{2})(?::?(\\d{2}))?(?::?(\\d{2}))?)?( BC)?");
  private static final Pattern RANGE = Pattern.compile(
      "FOR VALUES FROM \\((.*)\\) TO \\((.*)\\)");

  private Months() {
  }

  /** {@code events_2027_01}. */
  static String partitionName(String table, YearMonth month) {
    return table + "_" + month.format(SUFFIX);
  }

  /** A range partition's bounds, in UTC; {@code null} stands for MINVALUE / MAXVALUE. */
  record Range(LocalDateTime from, LocalDateTime to) {
    /** True when the range holds all of {@code month}. */
    boolean covers(YearMonth month) {
      LocalDateTime s = month.atDay(1).atStartOfDay();
      LocalDateTime e = month.plusMonths(1).atDay(1).atStartOfDay();
      return (from == null || !from.isAfter(s)) && (to == null || !to.isBefore(e));
    }

    /** True when the range shares at least an instant with {@code month}. */
    boolean overlaps(YearMonth month) {
      LocalDateTime s = month.atDay(1).atStartOfDay();
      LocalDateTime e = month.plusMonths(1).atDay(1).atStartOfDay();
      return (from == null || from.isBefore(e)) && (to == null || to.isAfter(s));
    }

    /** The month this range is exactly, or null. */
    YearMonth exactMonth() {
      if (from == null || to == null || from.getDayOfMonth() != 1
          || !from.toLocalTime().equals(LocalTime.MIDNIGHT)) {
        return null;
      }
      YearMonth m = YearMonth.from(from);
      return to.equals(m.plusMonths(1).atDay(1).atStartOfDay()) ? m : null;
    }

    @Override
    public String toString() {
      return "[" + (from == null ? "MINVALUE" : from) + ", " + (to == null ? "MAXVALUE" : to)
          + ")";
    }
  }

  /**
   * Parses {@code pg_get_expr(relpartbound, oid)} of a range partition (printed with DateStyle
   * ISO): {@code FOR VALUES FROM ('2026-01-01 00:00:00+00') TO (MAXVALUE)}.
   *
   * @return the range, or null when it is not a single-column range bound of a time value
   */
  static Range parseRange(String expr) {
    if (expr == null) {
      return null;
    }
    Matcher m = RANGE.matcher(expr.trim());
    if (!m.matches()) {
      return null;
    }
    Bound from = bound(m.group(1));
    Bound to = bound(m.group(2));
    if (from == null || to == null) {
      return null;
    }
    return new Range(from.value, to.value);
  }

  private record Bound(LocalDateTime value) { }

  private static Bound bound(String s) {
    String t = s.trim();
    if (t.equals("MINVALUE") || t.equals("MAXVALUE")) {
      return new Bound(null);
    }
    if (t.length() < 2 || t.charAt(0) != '\'' || t.charAt(t.length() - 1) != '\'') {
      return null;
    }
    LocalDateTime v = parseTime(t.substring(1, t.length() - 1));
    return v == null ? null : new Bound(v);
  }

  /** A date, timestamp or timestamptz as printed with DateStyle ISO, in UTC; null if not one. */
  static LocalDateTime parseTime(String text) {
    Matcher m = BOUND.matcher(text);
    if (!m.matches() || m.group(12) != null) {
      return null; // BC dates are no month of ours
    }
    LocalDateTime t = LocalDateTime.of(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
        Integer.parseInt(m.group(3)), m.group(4) == null ? 0 : Integer.parseInt(m.group(4)),
        m.group(5) == null ? 0 : Integer.parseInt(m.group(5)),
        m.group(6) == null ? 0 : Integer.parseInt(m.group(6)));
    if (m.group(7) != null) {
      String frac = (m.group(7).substring(1) + "000000000").substring(0, 9);
      t = t.withNano(Integer.parseInt(frac));
    }
    if (m.group(8) != null) {
      int sign = m.group(8).equals("-") ? -1 : 1;
      int secs = Integer.parseInt(m.group(9)) * 3600
          + (m.group(10) == null ? 0 : Integer.parseInt(m.group(10)) * 60)
          + (m.group(11) == null ? 0 : Integer.parseInt(m.group(11)));
      t = OffsetDateTime.of(t, ZoneOffset.ofTotalSeconds(sign * secs))
          .withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime();
    }
    return t;
  }
}
