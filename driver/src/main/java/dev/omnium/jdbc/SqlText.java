package dev.omnium.jdbc;

/**
 * Positions in SQL text, as PostgreSQL's lexer reads it: where the next token starts (white space
 * and comments skipped, block comments nested) and where it ends (a word, a quoted identifier, a
 * literal, a dollar-quoted body, a parameter, one punctuation character), without allocation.
 * What the text alone cannot delimit with certainty is {@link #UNCERTAIN}.
 */
final class SqlText {
  /** A literal or identifier whose end the text alone cannot tell (see {@link #tokenEnd}). */
  static final int UNCERTAIN = -1;

  private SqlText() { }

  /** The position after the statement that continues at {@code i}: past its ';', or the end. */
  static int statementEnd(String s, int i) {
    int n = s.length();
    i = skipSpace(s, i);
    while (i < n) {
      if (s.charAt(i) == ';') return i + 1;
      int end = tokenEnd(s, i);
      if (end < 0) return -1;
      i = skipSpace(s, end);
    }
    return n;
  }


  /** The first position at or after {@code i} that is neither white space nor a comment. */
  static int skipSpace(String s, int i) {
    int n = s.length();
    while (i < n) {
      char c = s.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '-' && i + 1 < n && s.charAt(i + 1) == '-') {
        int eol = s.indexOf('\n', i);
        i = eol < 0 ? n : eol + 1;
      } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
        int depth = 1; // PostgreSQL's block comments nest
        i += 2;
        while (i < n && depth > 0) {
          if (s.startsWith("/*", i)) {
            depth++;
            i += 2;
          } else if (s.startsWith("*/", i)) {
            depth--;
            i += 2;
          } else {
            i++;
          }
        }
      } else {
        break;
      }
    }
    return i;
  }

  /**
   * The end of the token at {@code i} (a word, a quoted identifier, a literal, a dollar-quoted
   * body, a parameter or one punctuation character), or {@link #UNCERTAIN} when it cannot be
   * delimited from the text alone: an unterminated literal, or a backslash before a quote in a
   * standard string (which standard_conforming_strings=off would read as an escaped quote).
   */
  static int tokenEnd(String s, int i) {
    int n = s.length();
    char c = s.charAt(i);
    if (isWordStart(c)) {
      int j = i + 1;
      while (j < n && isWordChar(s.charAt(j))) j++;
      if (j == i + 1 && j < n && s.charAt(j) == '\'') {
        // E'…' (backslash escapes), B'…', X'…', N'…'
        return literalEnd(s, j, c == 'e' || c == 'E');
      }
      return j;
    }
    if (c == '\'') return literalEnd(s, i, false);
    if (c == '"') {
      for (int j = i + 1; j < n; j++) {
        if (s.charAt(j) == '"') {
          if (j + 1 < n && s.charAt(j + 1) == '"') {
            j++;
          } else {
            return j + 1;
          }
        }
      }
      return UNCERTAIN;
    }
    if (c == '$') {
      int j = i + 1;
      if (j < n && Character.isDigit(s.charAt(j))) {
        while (j < n && Character.isDigit(s.charAt(j))) j++;
        return j; // $1: a parameter
      }
      while (j < n && isWordChar(s.charAt(j)) && s.charAt(j) != '$') j++;
      if (j < n && s.charAt(j) == '$') {
        int tag = j + 1 - i; // $tag$ … $tag$
        for (int k = s.indexOf('$', j + 1); k >= 0; k = s.indexOf('$', k + 1)) {
          if (s.regionMatches(k, s, i, tag)) return k + tag;
        }
        return UNCERTAIN;
      }
      return i + 1;
    }
    if (Character.isDigit(c)) {
      int j = i + 1;
      while (j < n && (isWordChar(s.charAt(j)))) j++;
      return j;
    }
    return i + 1;
  }

  private static int literalEnd(String s, int quote, boolean escapes) {
    int n = s.length();
    for (int j = quote + 1; j < n; j++) {
      char c = s.charAt(j);
      if (escapes && c == '\\') {
        j++;
      } else if (c == '\'') {
        if (!escapes && s.charAt(j - 1) == '\\') return UNCERTAIN;
        if (j + 1 < n && s.charAt(j + 1) == '\'') {
          j++;
        } else {
          return j + 1;
        }
      }
    }
    return UNCERTAIN;
  }

  static boolean isWordStart(char c) {
    return Character.isLetter(c) || c == '_';
  }

  static boolean isWordChar(char c) {
    return Character.isLetterOrDigit(c) || c == '_' || c == '$';
  }

  /** Whether the token {@code [start, end)} is {@code word}, ignoring case. */
  static boolean is(String s, int start, int end, String word) {
    return end - start == word.length() && s.regionMatches(true, start, word, 0, word.length());
  }

  /** Whether the word at {@code i} is {@code word}. */
  static boolean wordAt(String s, int i, String word) {
    int end = i + word.length();
    return s.regionMatches(true, i, word, 0, word.length())
        && (end == s.length() || !isWordChar(s.charAt(end)));
  }
}
