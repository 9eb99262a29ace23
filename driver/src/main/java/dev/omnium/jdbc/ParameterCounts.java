package dev.omnium.jdbc;

import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.postgresql.core.NativeQuery;
import org.postgresql.core.Parser;

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
