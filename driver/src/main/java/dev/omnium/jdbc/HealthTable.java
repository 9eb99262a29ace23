package dev.omnium.jdbc;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One section of the {@code check} report: typed columns and rows read from a system view,
 * rendered either as an aligned plain-text table or as a JSON array of objects. Values are
 * {@code String}, {@code Long}, {@code Double} (seconds), {@code Boolean}, {@code List<Long>}
 * (pids) or null.
 */
final class HealthTable {

  /** How a column is read from JDBC and shown in text; JSON always gets the raw value. */
  enum Kind {
    TEXT, INT, SECONDS, BYTES, BOOL, PIDS,
    /**
     * {@code pg_stat_activity.query}: whitespace collapsed, shortened, hidden when it mentions a
     * password.
     */
    QUERY
  }

  record Column(String key, String header, Kind kind) { }

  /** Shown characters of a query; the SQL side already cut it to {@link #QUERY_SQL_CHARS}. */
  static final int QUERY_CHARS = 60;
  static final int QUERY_SQL_CHARS = 200;
  static final String QUERY_HIDDEN = "(hidden: mentions a password)";

  private final List<Column> columns;
  private final List<Object[]> rows = new ArrayList<>();

  HealthTable(List<Column> columns) {
    this.columns = List.copyOf(columns);
  }

  static Column col(String key, String header, Kind kind) {
    return new Column(key, header, kind);
  }

  /** Reads every row of {@code rs}, column i of the table from column i + 1 of the result. */
  static HealthTable read(ResultSet rs, Column... columns) throws SQLException {
    HealthTable t = new HealthTable(Arrays.asList(columns));
    while (rs.next()) {
      Object[] row = new Object[columns.length];
      for (int i = 0; i < columns.length; i++) {
        row[i] = readValue(rs, i + 1, columns[i].kind());
      }
      t.rows.add(row);
    }
    return t;
  }

  HealthTable add(Object... row) {
    if (row.length != columns.size()) {
      throw new IllegalArgumentException(row.length + " values for " + columns.size() + " columns");
    }
    rows.add(row.clone());
    return this;
  }

  List<Column> columns() {
    return columns;
  }

  boolean isEmpty() {
    return rows.isEmpty();
  }

  int size() {
    return rows.size();
  }

  /** The value of column {@code key} in row {@code row}. */
  Object get(int row, String key) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).key().equals(key)) {
        return rows.get(row)[i];
      }
    }
    throw new IllegalArgumentException("no column " + key);
  }

  /**
   * Several servers' tables of the same shape as one, with a leading column naming the server:
   * the text report shows one table per section.
   */
  static HealthTable merge(Column lead, Map<String, HealthTable> byServer) {
    HealthTable result = null;
    for (Map.Entry<String, HealthTable> e : byServer.entrySet()) {
      HealthTable t = e.getValue();
      if (t == null) {
        continue;
      }
      if (result == null) {
        List<Column> cols = new ArrayList<>();
        cols.add(lead);
        cols.addAll(t.columns);
        result = new HealthTable(cols);
      }
      for (Object[] row : t.rows) {
        Object[] r = new Object[row.length + 1];
        r[0] = e.getKey();
        System.arraycopy(row, 0, r, 1, row.length);
        result.rows.add(r);
      }
    }
    return result;
  }

  /** A JSON array of objects keyed by column. */
  List<Map<String, Object>> toJson() {
    List<Map<String, Object>> list = new ArrayList<>();
    for (Object[] row : rows) {
      Map<String, Object> m = new LinkedHashMap<>();
      for (int i = 0; i < columns.size(); i++) {
        m.put(columns.get(i).key(), row[i]);
      }
      list.add(m);
    }
    return list;
  }

  /** Aligned plain text: a header line and one line per row, or {@code (none)}. */
  void printText(StringBuilder out, String indent) {
    if (rows.isEmpty()) {
      out.append(indent).append("(none)\n");
      return;
    }
    int n = columns.size();
    String[][] cells = new String[rows.size() + 1][n];
    int[] width = new int[n];
    for (int i = 0; i < n; i++) {
      cells[0][i] = columns.get(i).header();
    }
    for (int r = 0; r < rows.size(); r++) {
      for (int i = 0; i < n; i++) {
        cells[r + 1][i] = format(columns.get(i).kind(), rows.get(r)[i]);
      }
    }
    for (String[] line : cells) {
      for (int i = 0; i < n; i++) {
        width[i] = Math.max(width[i], line[i].length());
      }
    }
    for (String[] line : cells) {
      StringBuilder sb = new StringBuilder(indent);
      for (int i = 0; i < n; i++) {
        sb.append(line[i]);
        if (i < n - 1) {
          sb.append(" ".repeat(width[i] - line[i].length() + 2));
        }
      }
      out.append(stripTrailing(sb)).append('\n');
    }
  }

  // ---- formatting, shared with the report ----

  static String format(Kind kind, Object value) {
    if (value == null) {
      return "-";
    }
    switch (kind) {
      case SECONDS:
        return seconds((Double) value);
      case BYTES:
        return bytes((Long) value);
      case BOOL:
        return (Boolean) value ? "yes" : "no";
      case PIDS: {
        StringBuilder sb = new StringBuilder();
        for (Object pid : (List<?>) value) {
          sb.append(sb.length() == 0 ? "" : " ").append(pid);
        }
        return sb.length() == 0 ? "-" : sb.toString();
      }
      default:
        String s = value.toString();
        return s.isEmpty() ? "-" : s;
    }
  }

  /** {@code 0.081s}, {@code 12.30s}, {@code 4m05s}, {@code 2h03m}, {@code 3d04h}. */
  static String seconds(double s) {
    if (Double.isNaN(s)) {
      return "-";
    }
    if (Double.isInfinite(s)) {
      return "unknown";
    }
    if (s < 1) {
      return String.format(Locale.ROOT, "%.3fs", s);
    }
    if (s < 60) {
      return String.format(Locale.ROOT, "%.2fs", s);
    }
    long t = (long) s;
    if (t < 3600) {
      return String.format(Locale.ROOT, "%dm%02ds", t / 60, t % 60);
    }
    if (t < 86400) {
      return String.format(Locale.ROOT, "%dh%02dm", t / 3600, (t % 3600) / 60);
    }
    return String.format(Locale.ROOT, "%dd%02dh", t / 86400, (t % 86400) / 3600);
  }

  /** Like {@code pg_size_pretty}: {@code 8192 B}, {@code 16 kB}, {@code 1.5 GB}. */
  static String bytes(long b) {
    if (b < 0) {
      return "-" + bytes(-b);
    }
    if (b < 10 * 1024) {
      return b + " B";
    }
    String[] units = {"kB", "MB", "GB", "TB", "PB"};
    double v = b / 1024.0;
    int u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return (v < 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.0f", v))
        + " " + units[u];
  }

  /**
   * A query text safe and short enough for a report line: whitespace collapsed, at most
   * {@link #QUERY_CHARS} characters, and hidden entirely when it mentions a password
   * ({@code ALTER ROLE … PASSWORD '…'}, a dblink connection string…).
   */
  static String query(String sql) {
    if (sql == null) {
      return null;
    }
    String lower = sql.toLowerCase(Locale.ROOT);
    if (lower.contains("password") || lower.contains("passwd") || lower.contains("secret")) {
      return QUERY_HIDDEN;
    }
    String s = sql.replaceAll("\\s+", " ").trim();
    return s.length() <= QUERY_CHARS ? s : s.substring(0, QUERY_CHARS - 3) + "...";
  }

  private static Object readValue(ResultSet rs, int i, Kind kind) throws SQLException {
    switch (kind) {
      case INT:
      case BYTES: {
        long v = rs.getLong(i);
        return rs.wasNull() ? null : v;
      }
      case SECONDS: {
        double v = rs.getDouble(i);
        // Negative ages only come from clock skew between servers: count them as zero.
        return rs.wasNull() ? null : Math.max(0.0, v);
      }
      case BOOL: {
        boolean v = rs.getBoolean(i);
        return rs.wasNull() ? null : v;
      }
      case PIDS: {
        Array a = rs.getArray(i);
        if (a == null) {
          return null;
        }
        List<Long> pids = new ArrayList<>();
        for (Object o : (Object[]) a.getArray()) {
          if (o != null) {
            pids.add(((Number) o).longValue());
          }
        }
        a.free();
        return pids;
      }
      case QUERY:
        return query(rs.getString(i));
      default:
        return rs.getString(i);
    }
  }

  private static String stripTrailing(StringBuilder sb) {
    int end = sb.length();
    while (end > 0 && sb.charAt(end - 1) == ' ') {
      end--;
    }
    return sb.substring(0, end);
  }
}
