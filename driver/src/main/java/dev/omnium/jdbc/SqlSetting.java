package dev.omnium.jdbc;

import static dev.omnium.jdbc.SqlText.is;
import static dev.omnium.jdbc.SqlText.isWordStart;
import static dev.omnium.jdbc.SqlText.skipSpace;
import static dev.omnium.jdbc.SqlText.statementEnd;
import static dev.omnium.jdbc.SqlText.tokenEnd;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One change of a session setting made with SQL, as a logical connection records it
 * ({@link SqlSettings}): which setting ({@code key}, the GUC name in lower case; {@code role} and
 * {@code session_authorization} for {@code SET ROLE} and {@code SET SESSION AUTHORIZATION}), and
 * how: set by a statement to replay on every session bound, reset to its default, or every
 * setting reset ({@code RESET ALL}, {@code DISCARD ALL}).
 *
 * @param key the setting, or null for RESET ALL and DISCARD ALL
 * @param action {@link #SET}, {@link #RESET}, {@link #RESET_ALL} or {@link #DISCARD_ALL}
 * @param sql for SET, the statement that sets it on another session
 * @param params the values bound to {@code sql} (a prepared {@code set_config(…, ?, false)}), or
 *     null
 */
record SqlSetting(String key, int action, String sql, ParameterLog params) {
  static final int SET = 0;
  static final int RESET = 1;
  /** RESET ALL: every setting but role and session_authorization (GUC_NO_RESET_ALL). */
  static final int RESET_ALL = 2;
  /** DISCARD ALL: every setting, role and session authorization included. */
  static final int DISCARD_ALL = 3;

  static final String ROLE = "role";
  static final String SESSION_AUTHORIZATION = "session_authorization";

  /**
   * The changes of a string {@link SessionEffect#of} found to be {@link SessionEffect#SETTING},
   * statement by statement, in order; null when it cannot be recorded with certainty (a statement
   * of a multi-statement string with a bound parameter, whose value cannot be told apart).
   */
  static List<SqlSetting> parse(String sql) {
    List<SqlSetting> changes = new ArrayList<>(1);
    int n = sql.length();
    int i = skipSpace(sql, 0);
    boolean several = false;
    while (i < n) {
      int end = statementEnd(sql, i);
      if (end < 0) return null;
      int textEnd = end > 0 && sql.charAt(end - 1) == ';' ? end - 1 : end;
      String text = sql.substring(i, textEnd).trim();
      int next = skipSpace(sql, end);
      several |= next < n || !changes.isEmpty();
      if (!text.isEmpty() && SessionEffect.of(text) == SessionEffect.SETTING) {
        if (several && hasParameter(text)) return null;
        if (!parseOne(text, changes)) return null;
      }
      i = next;
    }
    return changes;
  }

  /** Whether the statement has a bound parameter ({@code ?} or {@code $n}) outside literals. */
  private static boolean hasParameter(String s) {
    for (int i = skipSpace(s, 0); i < s.length(); ) {
      char c = s.charAt(i);
      int end = tokenEnd(s, i);
      if (end < 0) return true;
      if (c == '?' || (c == '$' && end > i + 1 && Character.isDigit(s.charAt(i + 1)))) {
        return true;
      }
      i = skipSpace(s, end);
    }
    return false;
  }

  /** One SET, RESET, set_config or DISCARD ALL statement; false when it is none of them. */
  private static boolean parseOne(String s, List<SqlSetting> out) {
    int n = s.length();
    int i = 0;
    int end = tokenEnd(s, i);
    if (is(s, i, end, "discard")) {
      out.add(new SqlSetting(null, DISCARD_ALL, null, null));
      return true;
    }
    if (is(s, i, end, "select")) {
      String key = setConfigKey(s, skipSpace(s, end));
      if (key == null) return false;
      out.add(new SqlSetting(key, SET, s, null));
      return true;
    }
    boolean reset = is(s, i, end, "reset");
    if (!reset && !is(s, i, end, "set")) return false;
    i = skipSpace(s, end);
    if (i >= n) return false;
    end = tokenEnd(s, i);
    if (!reset && is(s, i, end, "session")) {
      i = skipSpace(s, end);
      if (i >= n) return false;
      end = tokenEnd(s, i);
      if (is(s, i, end, "characteristics")) return characteristics(s, skipSpace(s, end), out);
      if (!is(s, i, end, "authorization")) {
        return named(s, i, end, false, out); // SET SESSION name …
      }
      return authorization(s, skipSpace(s, end), out);
    }
    if (reset && is(s, i, end, "all")) {
      out.add(new SqlSetting(null, RESET_ALL, null, null));
      return true;
    }
    if (is(s, i, end, "session")) { // RESET SESSION AUTHORIZATION
      out.add(new SqlSetting(SESSION_AUTHORIZATION, RESET, null, null));
      return true;
    }
    return named(s, i, end, reset, out);
  }

  /** SET SESSION AUTHORIZATION value | DEFAULT, from the value. */
  private static boolean authorization(String s, int i, List<SqlSetting> out) {
    if (i >= s.length()) return false;
    boolean byDefault = is(s, i, tokenEnd(s, i), "default");
    out.add(new SqlSetting(SESSION_AUTHORIZATION, byDefault ? RESET : SET, s, null));
    return true;
  }

  /** SET [SESSION] name {TO | =} value, or RESET name, from the name at {@code [i, end)}. */
  private static boolean named(String s, int i, int end, boolean reset, List<SqlSetting> out) {
    int n = s.length();
    String key;
    int after;
    if (is(s, i, end, "time")) { // TIME ZONE
      key = "timezone";
      after = skipSpace(s, tokenEnd(s, skipSpace(s, end)));
    } else if (is(s, i, end, "xml")) { // XML OPTION
      key = "xmloption";
      after = skipSpace(s, tokenEnd(s, skipSpace(s, end)));
    } else if (!reset && is(s, i, end, "schema")) {
      key = "search_path";
      after = skipSpace(s, end);
    } else if (!reset && is(s, i, end, "names")) {
      key = "client_encoding";
      after = skipSpace(s, end);
    } else {
      StringBuilder name = new StringBuilder();
      int j = i;
      while (true) {
        int e = tokenEnd(s, j);
        if (e < 0) return false;
        char c = s.charAt(j);
        if (c == '"') {
          name.append(s, j + 1, e - 1);
        } else if (isWordStart(c)) {
          name.append(s, j, e);
        } else {
          return false;
        }
        j = skipSpace(s, e);
        if (j < n && s.charAt(j) == '.') {
          name.append('.');
          j = skipSpace(s, j + 1);
          if (j >= n) return false;
        } else {
          break;
        }
      }
      key = name.toString().toLowerCase(Locale.ROOT);
      after = j;
      if (!reset && after < n) {
        int e = tokenEnd(s, after);
        if (e < 0) return false;
        if (is(s, after, e, "to") || (e == after + 1 && s.charAt(after) == '=')) {
          after = skipSpace(s, e);
        }
      }
    }
    if (reset || defaultValue(s, after, key)) {
      out.add(new SqlSetting(key, RESET, null, null));
    } else {
      out.add(new SqlSetting(key, SET, s, null));
    }
    return true;
  }

  /** Whether the value at {@code i} is DEFAULT (or LOCAL for the time zone): a reset. */
  private static boolean defaultValue(String s, int i, String key) {
    if (i >= s.length()) return false;
    int end = tokenEnd(s, i);
    if (end < 0 || skipSpace(s, end) < s.length()) return false; // more than one word
    return is(s, i, end, "default") || (key.equals("timezone") && is(s, i, end, "local"));
  }

  /** SET SESSION CHARACTERISTICS AS TRANSACTION modes: one setting per mode. */
  private static boolean characteristics(String s, int i, List<SqlSetting> out) {
    List<String> words = new ArrayList<>();
    int n = s.length();
    while (i < n) {
      int end = tokenEnd(s, i);
      if (end < 0) return false;
      if (isWordStart(s.charAt(i))) words.add(s.substring(i, end).toLowerCase(Locale.ROOT));
      i = skipSpace(s, end);
    }
    if (words.size() < 2 || !words.get(0).equals("as") || !words.get(1).equals("transaction")) {
      return false;
    }
    for (int w = 2; w < words.size(); w++) {
      String word = words.get(w);
      if (word.equals("isolation") && w + 2 < words.size() && words.get(w + 1).equals("level")) {
        String level = words.get(w + 2);
        if (level.equals("repeatable") || level.equals("read")) {
          if (w + 3 >= words.size()) return false;
          level = level + " " + words.get(w + 3);
          w++;
        }
        out.add(new SqlSetting("default_transaction_isolation", SET,
            "SET default_transaction_isolation = '" + level + "'", null));
        w += 2;
      } else if (word.equals("read") && w + 1 < words.size()) {
        boolean only = words.get(w + 1).equals("only");
        out.add(new SqlSetting("default_transaction_read_only", SET,
            "SET default_transaction_read_only = " + (only ? "on" : "off"), null));
        w++;
      } else if (word.equals("deferrable") || word.equals("not")) {
        boolean not = word.equals("not");
        out.add(new SqlSetting("default_transaction_deferrable", SET,
            "SET default_transaction_deferrable = " + (not ? "off" : "on"), null));
        if (not) w++;
      } else {
        return false;
      }
    }
    return true;
  }

  /** The key of {@code SELECT set_config('name', …)} from the name on, or null. */
  private static String setConfigKey(String s, int i) {
    int paren = s.indexOf('(', i);
    if (paren < 0) return null;
    int lit = skipSpace(s, paren + 1);
    if (lit >= s.length() || s.charAt(lit) != '\'') return null;
    int end = tokenEnd(s, lit);
    if (end < 0) return null;
    return s.substring(lit + 1, end - 1).replace("''", "'").trim().toLowerCase(Locale.ROOT);
  }

  /** This change with the values bound to its statement, when it has parameters. */
  SqlSetting withParams(ParameterLog log) {
    return action == SET && log != null && hasParameter(sql)
        ? new SqlSetting(key, action, sql, log) : this;
  }

  /** The statement that gives this setting back its default on a session. */
  /**
   * The same change for the current transaction only ({@code SET LOCAL}, {@code set_config(…,
   * true)}), as a pooler needs it; a {@code default_transaction_*} setting becomes the
   * transaction's own. Null when it has none: bound values, or a form not recognised.
   */
  String localSql() {
    if (action != SET || params != null || sql == null) return null;
    int i = skipSpace(sql, 0);
    int end = tokenEnd(sql, i);
    if (end < 0) return null;
    if (is(sql, i, end, "select")) {
      Matcher m = SESSION_SCOPED.matcher(sql);
      return m.find() ? sql.substring(0, m.start()) + ", true)" + sql.substring(m.end()) : null;
    }
    if (!is(sql, i, end, "set")) return null;
    int rest = skipSpace(sql, end);
    int wordEnd = tokenEnd(sql, rest);
    if (wordEnd < 0) return null;
    if (is(sql, rest, wordEnd, "session")) {
      int next = skipSpace(sql, wordEnd);
      int nextEnd = tokenEnd(sql, next);
      if (nextEnd < 0 || !is(sql, next, nextEnd, "authorization")) rest = next; // SET SESSION name
    }
    String tail = sql.substring(rest);
    if (key.startsWith("default_transaction_")
        && tail.regionMatches(true, 0, key, 0, key.length())) {
      tail = tail.substring("default_".length()); // this transaction's own, set before its query
    }
    return "SET LOCAL " + tail;
  }

  /** The last argument of {@code set_config(…, false)}: session-scoped. */
  private static final Pattern SESSION_SCOPED =
      Pattern.compile("(?i),\\s*false\\s*\\)(?=[^)]*$)");

  String resetSql() {
    if (action == RESET_ALL) return "RESET ALL";
    if (action == DISCARD_ALL) return SessionReset.RESET;
    if (SESSION_AUTHORIZATION.equals(key)) return "RESET SESSION AUTHORIZATION";
    if (ROLE.equals(key)) return "RESET ROLE";
    return "RESET \"" + key.replace("\"", "\"\"").replace(".", "\".\"") + "\"";
  }
}
