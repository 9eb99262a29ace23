package dev.omnium.jdbc;

import java.util.Locale;
import java.util.Set;

/**
 * What the first words of a statement say about its transaction, for {@link TransactionSettings}:
 * transaction control (it must run as it is: {@code SET TRANSACTION} must come first in its
 * transaction, {@code BEGIN} opens one), a statement PostgreSQL refuses inside a transaction
 * block ({@code VACUUM}, {@code CREATE INDEX CONCURRENTLY}, {@code CREATE DATABASE}, a procedure
 * that may commit), or anything else. Reads the first two words only (and looks for
 * {@code CONCURRENTLY} after {@code CREATE}, {@code DROP}, {@code ALTER} or {@code REINDEX}).
 */
final class StatementStart {
  static final int OTHER = 0;
  static final int TRANSACTION_CONTROL = 1;
  static final int NO_TRANSACTION_BLOCK = 2;

  private static final Set<String> CONTROL = Set.of("BEGIN", "START", "COMMIT", "END",
      "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE");
  private static final Set<String> OUTSIDE_BLOCK = Set.of("VACUUM", "CLUSTER", "DISCARD", "CALL");
  private static final Set<String> OUTSIDE_BLOCK_OBJECTS = Set.of("DATABASE", "TABLESPACE",
      "SUBSCRIPTION", "SYSTEM");

  private StatementStart() { }

  static int of(String sql) {
    int[] pos = {0};
    String first = word(sql, pos);
    if (first == null) return OTHER;
    if (CONTROL.contains(first)) return TRANSACTION_CONTROL;
    if (OUTSIDE_BLOCK.contains(first)) return NO_TRANSACTION_BLOCK;
    String second = word(sql, pos);
    switch (first) {
      case "SET":
        return "TRANSACTION".equals(second) ? TRANSACTION_CONTROL : OTHER;
      case "PREPARE": // PREPARE TRANSACTION; PREPARE name AS ... is a statement like any other
        return "TRANSACTION".equals(second) ? TRANSACTION_CONTROL : OTHER;
      case "CREATE":
      case "DROP":
      case "ALTER":
      case "REINDEX":
        if (second != null && OUTSIDE_BLOCK_OBJECTS.contains(second)) return NO_TRANSACTION_BLOCK;
        return sql.toUpperCase(Locale.ROOT).contains("CONCURRENTLY") ? NO_TRANSACTION_BLOCK : OTHER;
      default:
        return OTHER;
    }
  }

  /** The next word (letters), upper case, after blanks and comments; null at the end. */
  private static String word(String sql, int[] pos) {
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
    return i == start ? null : sql.substring(start, i).toUpperCase(Locale.ROOT);
  }
}
