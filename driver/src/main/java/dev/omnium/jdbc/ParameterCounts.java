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
 * Counts are cached per SQL text: a statement prepared again costs one map lookup.
 */
final class ParameterCounts {
  /** Any index is accepted: pgjdbc's statement decides at execute. */
  static final int UNKNOWN = Integer.MAX_VALUE;

  /** Enough for an application's statements; cleared when full rather than grown without end. */
  private static final int MAX_ENTRIES = 2048;

  private static final ConcurrentHashMap<String, Integer> COUNTS = new ConcurrentHashMap<>();

  private ParameterCounts() { }

  /**
   * @param sql a prepared statement's SQL as the application gave it
   * @return how many parameters pgjdbc's statement has, or {@link #UNKNOWN} when the parser
   *     refuses the SQL (pgjdbc then refuses it itself when the statement is created)
   */
  static int of(String sql) {
    Integer n = COUNTS.get(sql);
    if (n != null) return n;
    int count = count(sql);
    if (COUNTS.size() >= MAX_ENTRIES) COUNTS.clear();
    COUNTS.put(sql, count);
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

  private static int count(String sql) {
    try {
      // standard_conforming_strings is on unless a server is configured otherwise (PG >= 9.1)
      String parsed = Parser.replaceProcessing(sql, true, true);
      List<NativeQuery> queries = Parser.parseJdbcSql(parsed, true, true, true, false, false);
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
