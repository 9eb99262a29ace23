package dev.omnium.ops;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a migration statement is, as far as the guard cares: a plain {@code CREATE INDEX}, one
 * with {@code CONCURRENTLY}, an {@code ALTER TABLE} that changes a column's type, another
 * statement with {@code CONCURRENTLY}, or anything else; and the table it works on, as written.
 * Comments, string literals and dollar-quoted bodies are skipped, so a keyword inside them does
 * not count.
 */
final class MigrationStatement {
  enum Kind { CREATE_INDEX, CREATE_INDEX_CONCURRENTLY, ALTER_COLUMN_TYPE, CONCURRENTLY, OTHER }

  final Kind kind;
  /** The table as written (quotes kept, for to_regclass), or null. */
  final String table;
  /** The statement on one line, shortened, for messages. */
  final String text;

  private MigrationStatement(Kind kind, String table, String text) {
    this.kind = kind;
    this.table = table;
    this.text = text;
  }

  /** @return true when it must run outside a transaction block */
  boolean concurrently() {
    return kind == Kind.CREATE_INDEX_CONCURRENTLY || kind == Kind.CONCURRENTLY;
  }

  static MigrationStatement of(String sql) {
    List<String> t = tokens(sql);
    String text = shorten(sql);
    int i = 0;
    if (is(t, i, "create")) {
      i++;
      if (is(t, i, "unique")) {
        i++;
      }
      if (is(t, i, "index")) {
        i++;
        boolean concurrently = is(t, i, "concurrently");
        if (concurrently) {
          i++;
        }
        if (is(t, i, "if") && is(t, i + 1, "not") && is(t, i + 2, "exists")) {
          i += 3;
        }
        if (!is(t, i, "on")) {
          i++; // the index name
        }
        if (is(t, i, "on")) {
          i++;
          if (is(t, i, "only")) {
            i++;
          }
          String table = name(t, i);
          return new MigrationStatement(concurrently ? Kind.CREATE_INDEX_CONCURRENTLY
              : Kind.CREATE_INDEX, table, text);
        }
      }
    }
    if (is(t, 0, "alter") && is(t, 1, "table")) {
      i = 2;
      if (is(t, i, "if") && is(t, i + 1, "exists")) {
        i += 2;
      }
      if (is(t, i, "only")) {
        i++;
      }
      String table = name(t, i);
      if (changesType(t, i)) {
        return new MigrationStatement(Kind.ALTER_COLUMN_TYPE, table, text);
      }
      if (t.contains("concurrently")) {
        return new MigrationStatement(Kind.CONCURRENTLY, table, text);
      }
      return new MigrationStatement(Kind.OTHER, table, text);
    }
    return new MigrationStatement(t.contains("concurrently") ? Kind.CONCURRENTLY : Kind.OTHER,
        null, text);
  }

  /** {@code ALTER [COLUMN] name [SET DATA] TYPE} at the top level of an ALTER TABLE. */
  private static boolean changesType(List<String> t, int from) {
    int depth = 0;
    for (int i = from; i < t.size(); i++) {
      String w = t.get(i);
      if (w.equals("(")) {
        depth++;
      } else if (w.equals(")")) {
        depth--;
      } else if (depth == 0 && w.equals("alter") && i > from) {
        int j = i + 1;
        if (is(t, j, "column")) {
          j++;
        }
        j++; // the column name
        if (is(t, j, "set") && is(t, j + 1, "data")) {
          j += 2;
        }
        if (is(t, j, "type")) {
          return true;
        }
      }
    }
    return false;
  }

  /** A possibly qualified name starting at {@code i}: {@code a}, {@code a.b}, {@code "A".b}. */
  private static String name(List<String> t, int i) {
    if (i >= t.size()) {
      return null;
    }
    StringBuilder n = new StringBuilder(t.get(i));
    while (is(t, i + 1, ".") && i + 2 < t.size()) {
      n.append('.').append(t.get(i + 2));
      i += 2;
    }
    return n.toString();
  }

  private static boolean is(List<String> t, int i, String word) {
    return i < t.size() && t.get(i).equals(word);
  }

  /**
   * Words (lower case), quoted identifiers (as written, with their quotes) and punctuation; string
   * literals, dollar-quoted strings and comments dropped.
   */
  static List<String> tokens(String sql) {
    List<String> out = new ArrayList<>();
    int n = sql.length();
    int i = 0;
    while (i < n) {
      char ch = sql.charAt(i);
      if (Character.isWhitespace(ch)) {
        i++;
      } else if (ch == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n') {
          i++;
        }
      } else if (ch == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int depth = 0;
        do {
          if (sql.startsWith("/*", i)) {
            depth++;
            i += 2;
          } else if (sql.startsWith("*/", i)) {
            depth--;
            i += 2;
          } else {
            i++;
          }
        } while (i < n && depth > 0);
      } else if (ch == '\'') {
        i = afterQuoted(sql, i);
        out.add("'");
      } else if (ch == '"') {
        int start = i;
        i = afterQuoted(sql, i);
        out.add(sql.substring(start, i));
      } else if (ch == '$' && dollarTag(sql, i) != null) {
        String tag = dollarTag(sql, i);
        int end = sql.indexOf(tag, i + tag.length());
        i = end < 0 ? n : end + tag.length();
        out.add("'");
      } else if (Character.isLetter(ch) || ch == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_'
            || sql.charAt(i) == '$')) {
          i++;
        }
        out.add(sql.substring(start, i).toLowerCase(Locale.ROOT));
      } else {
        out.add(String.valueOf(ch));
        i++;
      }
    }
    return out;
  }

  /** The index after the literal or quoted name opening at {@code i} (a doubled quote stays in). */
  private static int afterQuoted(String sql, int i) {
    char quote = sql.charAt(i);
    int j = i + 1;
    while (j < sql.length()) {
      if (sql.charAt(j) != quote) {
        j++;
      } else if (j + 1 < sql.length() && sql.charAt(j + 1) == quote) {
        j += 2;
      } else {
        return j + 1;
      }
    }
    return j;
  }

  /** {@code $tag$} or {@code $$} at {@code i}, or null. */
  private static String dollarTag(String sql, int i) {
    int j = i + 1;
    while (j < sql.length() && (Character.isLetterOrDigit(sql.charAt(j))
        || sql.charAt(j) == '_')) {
      j++;
    }
    if (j < sql.length() && sql.charAt(j) == '$' && (j == i + 1
        || !Character.isDigit(sql.charAt(i + 1)))) {
      return sql.substring(i, j + 1);
    }
    return null;
  }

  /** One line, at most 200 characters. */
  static String shorten(String sql) {
    String one = sql.replaceAll("\\s+", " ").trim();
    return one.length() <= 200 ? one : one.substring(0, 197) + "...";
  }
}
