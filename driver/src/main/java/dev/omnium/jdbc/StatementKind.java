package dev.omnium.jdbc;

import java.util.Locale;

/**
 * Whether an autocommit statement that returned rows may have written (read-your-writes must then
 * learn where its commit ended). Conservative: only statements that start as a plain query
 * ({@code SELECT}, {@code VALUES}, {@code TABLE}, {@code SHOW}, {@code EXPLAIN}, or a {@code WITH}
 * query) and contain no data-changing keyword count as reads; everything else, a
 * {@code SELECT ... FOR UPDATE} or a keyword inside a string literal included, counts as a write,
 * which costs one position query, never a missed write. Not seen: writes made by functions that a
 * plain {@code SELECT} calls (run those in a transaction, whose commit is always recorded). What
 * SQL leaves on its session is {@link SessionEffect}'s question.
 */
final class StatementKind {
  private static final String[] READ_STARTS = {
      "select", "values", "table", "show", "explain", "with"};
  private static final String[] WRITE_WORDS = {
      "insert", "update", "delete", "merge", "into", "analyze", "analyse", "copy", "call"};

  private StatementKind() { }

  /** False only when {@code sql} is certainly a plain query; true when null or unsure. */
  static boolean mayWrite(String sql) {
    if (sql == null) return true;
    int i = skipNoise(sql, 0);
    String first = word(sql, i);
    if (!oneOf(first, READ_STARTS)) return true;
    for (i += first.length(); i < sql.length(); ) {
      char c = sql.charAt(i);
      if (Character.isLetter(c)) {
        String w = word(sql, i);
        if (oneOf(w, WRITE_WORDS)) return true;
        i += w.length();
      } else if (c == '_' || Character.isDigit(c) || c == '$') {
        // the rest of an identifier such as my_update or t1
        while (i < sql.length() && SqlText.isWordChar(sql.charAt(i))) i++;
      } else {
        i++;
      }
    }
    return false;
  }

  /** Skips white space, comments and opening parentheses before the first keyword. */
  private static int skipNoise(String sql, int i) {
    i = SqlText.skipSpace(sql, i);
    while (i < sql.length() && sql.charAt(i) == '(') i = SqlText.skipSpace(sql, i + 1);
    return i;
  }

  private static String word(String sql, int start) {
    int end = start;
    while (end < sql.length() && SqlText.isWordChar(sql.charAt(end))) end++;
    return sql.substring(start, end).toLowerCase(Locale.ROOT);
  }

  private static boolean oneOf(String w, String[] words) {
    for (String s : words) {
      if (s.equals(w)) return true;
    }
    return false;
  }
}
