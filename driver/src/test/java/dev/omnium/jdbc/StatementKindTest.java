package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StatementKindTest {

  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT 1", "  select * from t where id = ?", "/* c */ -- x\n SELECT a FROM b",
      "(SELECT 1) UNION (SELECT 2)", "VALUES (1)", "TABLE t", "SHOW search_path",
      "WITH x AS (SELECT 1) SELECT * FROM x", "EXPLAIN SELECT 1", "select updated_at from t",
      "SELECT my_update_count FROM t1"})
  void plainQueriesAreReads(String sql) {
    assertFalse(StatementKind.mayWrite(sql), sql);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "INSERT INTO t VALUES (1) RETURNING id", "update t set a = 1 returning *",
      "DELETE FROM t RETURNING id", "MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE",
      "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "SELECT * INTO copy_t FROM t",
      "SELECT * FROM t FOR UPDATE", "EXPLAIN ANALYZE INSERT INTO t VALUES (1)",
      "{? = call f()}", "CALL p()", "SELECT 'insert'", "", "-- only a comment"})
  void everythingElseMayWrite(String sql) {
    assertTrue(StatementKind.mayWrite(sql), sql);
  }

  @Test
  void nullMayWrite() {
    assertTrue(StatementKind.mayWrite(null));
  }
}
