package dev.omnium.jdbc;

import java.util.Locale;

/**
 * What the first words of a statement say about its transaction, for {@link TransactionSettings}:
 * transaction control (it must run as it is: {@code SET TRANSACTION} must come first in its
 * transaction, {@code BEGIN} opens one), a statement PostgreSQL refuses inside a transaction
 * block ({@code VACUUM}, {@code CREATE INDEX CONCURRENTLY}, {@code CREATE DATABASE}, a procedure
 * that may commit), {@code DISCARD} (refused there too, and it reads or writes no data), or
 * anything else. Reads the first two words only (and looks for
 * {@code CONCURRENTLY} after {@code CREATE}, {@code DROP}, {@code ALTER} or {@code REINDEX}),
 * allocating nothing for the usual statement.
 */
final class StatementStart {
  static final int OTHER = 0;
  static final int TRANSACTION_CONTROL = 1;
  static final int NO_TRANSACTION_BLOCK = 2;
  static final int DISCARD = 3;

  private static final String[] CONTROL = {"BEGIN", "START", "COMMIT", "END", "ROLLBACK",
      "ABORT", "SAVEPOINT", "RELEASE"};
  private static final String[] OUTSIDE_BLOCK = {"VACUUM", "CLUSTER", "CALL"};
  private static final String[] OUTSIDE_BLOCK_OBJECTS = {"DATABASE", "TABLESPACE", "SUBSCRIPTION",
      "SYSTEM"};

  private StatementStart() { }

  static int of(String sql) {
    int[] pos = {0};
    int first = word(sql, pos);
    if (first < 0) return OTHER;
    int end = pos[0];
    for (String w : CONTROL) {
      if (is(sql, first, end, w)) return TRANSACTION_CONTROL;
    }
    if (is(sql, first, end, "DISCARD")) return DISCARD;
    for (String w : OUTSIDE_BLOCK) {
      if (is(sql, first, end, w)) return NO_TRANSACTION_BLOCK;
    }
    boolean set = is(sql, first, end, "SET");
    boolean prepare = !set && is(sql, first, end, "PREPARE");
    boolean ddl = !set && !prepare && (is(sql, first, end, "CREATE") || is(sql, first, end, "DROP")
        || is(sql, first, end, "ALTER") || is(sql, first, end, "REINDEX"));
    if (!set && !prepare && !ddl) return OTHER;
    int second = word(sql, pos);
    int secondEnd = pos[0];
    if (set || prepare) { // PREPARE name AS ... is a statement like any other
      return second >= 0 && is(sql, second, secondEnd, "TRANSACTION") ? TRANSACTION_CONTROL : OTHER;
    }
    if (second >= 0) {
      for (String w : OUTSIDE_BLOCK_OBJECTS) {
        if (is(sql, second, secondEnd, w)) return NO_TRANSACTION_BLOCK;
      }
    }
    return sql.toUpperCase(Locale.ROOT).contains("CONCURRENTLY") ? NO_TRANSACTION_BLOCK : OTHER;
  }

  private static boolean is(String sql, int start, int end, String word) {
    return end - start == word.length() && sql.regionMatches(true, start, word, 0, word.length());
  }

  /** The start of the next word (letters) after blanks and comments, its end in pos; or -1. */
  private static int word(String sql, int[] pos) {
    int i = pos[0];
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c) || c == '(') {
        i++;
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        int eol = sql.indexOf('\n', i);
        i = eol < 0 ? n : eol + 1;
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int end = sql.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
      } else {
        break;
      }
    }
    int start = i;
    while (i < n && Character.isLetter(sql.charAt(i))) i++;
    pos[0] = i;
    return i == start ? -1 : start;
  }
}
