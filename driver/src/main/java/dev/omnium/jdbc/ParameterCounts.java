package dev.omnium.jdbc;

import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.postgresql.core.NativeQuery;
import org.postgresql.core.Parser;
import org.postgresql.jdbc.EscapeSyntaxCallMode;

/**
 * The number of parameters pgjdbc gives a prepared statement's SQL, counted with pgjdbc's own
 * parser (escape processing, then the split into native queries, whose placeholders add up), so
 * a setter can refuse an index above it at the call, as pgjdbc does, before any session is bound.
 * The parser reads quotes as the session's {@code standard_conforming_strings} says (a backslash
 * escapes a quote when it is off); with no session bound yet, the larger of both counts is taken,
 * so no valid index is refused. Counts are cached per SQL text: a statement prepared again costs
 * one map lookup.
 */
final class ParameterCounts {
  /** Any index is accepted: pgjdbc's statement decides at execute. */
  static final int UNKNOWN = Integer.MAX_VALUE;

  /** Enough for an application's statements; cleared when full rather than grown without end. */
  private static final int MAX_ENTRIES = 2048;

  private static final ConcurrentHashMap<String, Integer> COUNTS = new ConcurrentHashMap<>();
  /** Counts with {@code standard_conforming_strings} off. */
  private static final ConcurrentHashMap<String, Integer> NON_STANDARD = new ConcurrentHashMap<>();

  private ParameterCounts() { }

  /**
   * @param sql a prepared statement's SQL as the application gave it
   * @param standardStrings the session's {@code standard_conforming_strings}, null when unknown
   * @return how many parameters pgjdbc's statement has, or {@link #UNKNOWN} when the parser
   *     refuses the SQL (pgjdbc then refuses it itself when the statement is created)
   */
  static int of(String sql, Boolean standardStrings) {
    if (standardStrings == null) {
      int on = of(sql, COUNTS, true);
      int off = of(sql, NON_STANDARD, false);
      return Math.max(on, off);
    }
    return standardStrings ? of(sql, COUNTS, true) : of(sql, NON_STANDARD, false);
  }

  /** Counted as pgjdbc's sessions do by default ({@code standard_conforming_strings} on). */
  static int of(String sql) {
    return of(sql, true);
  }

  private static int of(String sql, ConcurrentHashMap<String, Integer> cache, boolean standard) {
    Integer n = cache.get(sql);
    if (n != null) return n;
    int count = count(sql, standard);
    if (cache.size() >= MAX_ENTRIES) cache.clear();
    cache.put(sql, count);
    return count;
  }

  /**
   * pgjdbc's check of a callable statement's SQL when it is prepared: its escapes, then its call
   * escape ({@code { ? = call f(?) }}); malformed, it fails at {@code prepareCall} with pgjdbc's
   * error (42601, or pgjdbc's own for a bad escape), not at execute.
   */
  static void checkCall(String sql) throws SQLException {
    // neither the server version nor the call mode changes what is malformed
    Parser.modifyJdbcCall(Parser.replaceProcessing(sql, true, true), true, 110000,
        EscapeSyntaxCallMode.SELECT);
  }

  /**
   * The SQL as pgjdbc's {@code toString()} shows a statement with no parameter set: its native
   * queries with {@code ?} for each parameter; the SQL itself when the parser refuses it.
   */
  static String withPlaceholders(String sql) {
    try {
      StringBuilder sb = new StringBuilder();
      for (NativeQuery q : Parser.parseJdbcSql(Parser.replaceProcessing(sql, true, true), true,
          true, true, false, false)) {
        sb.append(sb.length() == 0 ? "" : ";").append(q.toString(null));
      }
      return sb.toString();
    } catch (SQLException | RuntimeException e) {
      return sql;
    }
  }

  private static int count(String sql, boolean standard) {
    try {
      String parsed = Parser.replaceProcessing(sql, true, standard);
      List<NativeQuery> queries = Parser.parseJdbcSql(parsed, standard, true, true, false, false);
      int count = 0;
      for (NativeQuery q : queries) {
        count += q.bindPositions.length;
      }
      return count;
    } catch (SQLException | RuntimeException e) {
      return UNKNOWN;
    }
  }
}
