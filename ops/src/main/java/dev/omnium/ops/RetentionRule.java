package dev.omnium.ops;

import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One retention rule: a table kept by month ({@link Kind#MONTH}: a table partitioned by range on
 * {@code column}, whose whole months are dropped once past {@code keepDays}) or trimmed
 * ({@link Kind#DELETE}: a plain table whose rows older than {@code keepDays} by {@code column} are
 * deleted in batches, optionally only those matching {@code where}).
 *
 * <p>In a rules file a rule is one line: {@code TABLE month COLUMN KEEP} or
 * {@code TABLE delete COLUMN KEEP [where SQL]}, KEEP as {@code 30d} (see {@link RetentionRules}).
 */
public final class RetentionRule {

  /** How old data leaves a table. */
  public enum Kind {
    /** Whole monthly partitions are detached and dropped. */
    MONTH,
    /** Rows are deleted in batches. */
    DELETE;

    /** @return the word used in a rules file: {@code month} or {@code delete} */
    public String word() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** An unquoted, optionally schema-qualified SQL name, as PostgreSQL folds it. */
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*");
  /** TABLE_YYYY_MM must fit PostgreSQL's 63-byte names. */
  static final int MAX_MONTH_TABLE_NAME = 63 - "_yyyy_mm".length();
  /** A hundred years: a larger keep is surely a typo. */
  static final int MAX_KEEP_DAYS = 36_500;

  private final String table;
  private final Kind kind;
  private final String column;
  private final int keepDays;
  private final String where;
  private final String source;

  private RetentionRule(String table, Kind kind, String column, int keepDays, String where,
      String source) {
    this.table = table;
    this.kind = kind;
    this.column = column;
    this.keepDays = keepDays;
    this.where = where;
    this.source = source;
  }

  /**
   * A table kept by month.
   *
   * @param table the range-partitioned table ({@code name} or {@code schema.name})
   * @param column its partition column ({@code date}, {@code timestamp} or {@code timestamptz})
   * @param keepDays how long every row is kept at least, in days (1 or more)
   * @return the rule
   * @throws IllegalArgumentException when a name or the keep is not valid, saying which
   */
  public static RetentionRule month(String table, String column, int keepDays) {
    return of(table, Kind.MONTH, column, keepDays, null, null);
  }

  /**
   * A table trimmed by deleting old rows in batches.
   *
   * @param table the plain table
   * @param column its time column
   * @param keepDays how long rows are kept, in days (1 or more)
   * @param where an extra SQL condition on the rows to delete, or null for all old rows
   * @return the rule
   * @throws IllegalArgumentException when a name, the keep or the condition is not valid
   */
  public static RetentionRule delete(String table, String column, int keepDays, String where) {
    return of(table, Kind.DELETE, column, keepDays, where, null);
  }

  static RetentionRule of(String table, Kind kind, String column, int keepDays, String where,
      String source) {
    Objects.requireNonNull(kind, "kind");
    checkName("table", table, true);
    checkName("column", column, false);
    if (kind == Kind.MONTH) {
      String bare = table.substring(table.indexOf('.') + 1);
      if (bare.length() > MAX_MONTH_TABLE_NAME) {
        throw new IllegalArgumentException("table name " + table + " is longer than "
            + MAX_MONTH_TABLE_NAME + " characters: its partitions " + bare
            + "_YYYY_MM would not fit PostgreSQL's 63-character names");
      }
      if (where != null) {
        throw new IllegalArgumentException("a month rule takes no where condition (whole months"
            + " are dropped); use a delete rule");
      }
    }
    if (keepDays < 1 || keepDays > MAX_KEEP_DAYS) {
      throw new IllegalArgumentException("keep must be between 1d and " + MAX_KEEP_DAYS
          + "d, got " + keepDays + "d");
    }
    String w = where == null ? null : where.trim();
    if (w != null) {
      if (w.isEmpty()) {
        throw new IllegalArgumentException("'where' needs a condition after it");
      }
      if (w.indexOf(';') >= 0) {
        throw new IllegalArgumentException("the where condition must be one SQL expression,"
            + " without ';': " + w);
      }
    }
    return new RetentionRule(table.toLowerCase(Locale.ROOT), kind,
        column.toLowerCase(Locale.ROOT), keepDays, w, source);
  }

  private static void checkName(String what, String name, boolean qualified) {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException(what + " name is missing");
    }
    String[] parts = name.split("\\.", -1);
    boolean ok = parts.length == 1 || (qualified && parts.length == 2);
    for (String p : parts) {
      ok &= NAME.matcher(p).matches();
    }
    if (!ok) {
      throw new IllegalArgumentException("bad " + what + " name '" + name + "': expected "
          + (qualified ? "name or schema.name" : "a name") + " of letters, digits and _"
          + " (unquoted, as PostgreSQL folds it to lower case)");
    }
  }

  /** @return the table, lower case, as written ({@code name} or {@code schema.name}) */
  public String table() {
    return table;
  }

  /** @return how old data leaves the table */
  public Kind kind() {
    return kind;
  }

  /** @return the partition column (month) or time column (delete), lower case */
  public String column() {
    return column;
  }

  /** @return the keep time in days */
  public int keepDays() {
    return keepDays;
  }

  /** @return the extra condition of a delete rule, or null */
  public String where() {
    return where;
  }

  /** @return where the rule was read ({@code rules.txt:3}), or null for rules made in Java */
  public String source() {
    return source;
  }

  /** @return the rule as a rules-file line: {@code events month created_at 30d} */
  @Override
  public String toString() {
    return table + " " + kind.word() + " " + column + " " + keepDays + "d"
        + (where == null ? "" : " where " + where);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RetentionRule && o.toString().equals(toString());
  }

  @Override
  public int hashCode() {
    return toString().hashCode();
  }
}
