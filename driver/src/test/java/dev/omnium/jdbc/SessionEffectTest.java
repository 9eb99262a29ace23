package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What SQL may leave on its session, read from its text: one case per line. */
class SessionEffectTest {
  /** Ordinary work, ORM-shaped SQL included: nothing that outlives the transaction. */
  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT v, payload FROM bench_read WHERE id = ?", "INSERT INTO bench_write (v) VALUES (?)",
      "insert into \"public\".\"t\" (\"id\", \"v\") values (?, ?) returning \"id\"",
      "select u1_0.id,u1_0.name from users u1_0 where u1_0.id=?",
      "SELECT count(*), max(id), coalesce(sum(id), 0), now() FROM items WHERE id > ?",
      "update t set a = coalesce(?, a), b = lower(?) where id in (?, ?)",
      "DELETE FROM t WHERE id = ANY (?) AND EXISTS (SELECT 1 FROM u WHERE u.id = t.id)",
      "WITH x(a, b) AS (SELECT 1, 2) SELECT * FROM x", "WITH RECURSIVE r(n) AS (SELECT 1) TABLE r",
      "SELECT row_number() OVER (PARTITION BY a ORDER BY b), x::numeric(10, 2) FROM t",
      "SELECT * FROM (VALUES (1, 2)) AS v(a, b)", "SELECT pg_catalog.lower('A')",
      "SELECT cast(? AS int), extract(epoch FROM now()), date_trunc('day', now())",
      "INSERT INTO t (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET v = excluded.v",
      "CREATE TABLE IF NOT EXISTS t (id int PRIMARY KEY, v text CHECK (length(v) > 0))",
      "CREATE TEMP TABLE x (a int) ON COMMIT DROP", "SET LOCAL search_path = a",
      "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SET CONSTRAINTS ALL DEFERRED",
      "SELECT set_config('search_path', 'a', true)", "SELECT pg_advisory_xact_lock(1)",
      "BEGIN", "COMMIT", "ROLLBACK TO SAVEPOINT a", "SHOW search_path", "NOTIFY c, 'x'",
      "UNLISTEN *", "DECLARE c CURSOR FOR SELECT 1", "DISCARD PLANS", "PREPARE TRANSACTION 'x'",
      "SELECT 'PREPARE p; LISTEN x; SELECT f()'", "SELECT $$ f() $$, $t$ LISTEN $t$",
      "-- SET search_path = x\nSELECT 1", "/* LISTEN /* nested */ x */ SELECT 1", "", "  ;  ",
      "EXPLAIN ANALYZE SELECT count(*) FROM t", "LOCK TABLE t IN ACCESS SHARE MODE",
      "COPY t (a, b) FROM STDIN", "SELECT * FROM t FOR UPDATE", "TABLE t", "VALUES (1)"})
  void ordinaryWorkLeavesNothing(String sql) {
    assertEquals(SessionEffect.NONE, SessionEffect.of(sql), sql);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "SET search_path = tenant_a", "  set TimeZone = 'UTC'", "/* x */ SET SESSION x.y = 1",
      "RESET search_path", "reset all", "SET ROLE limited", "SET SESSION AUTHORIZATION u",
      "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", "SET TIME ZONE 'UTC'",
      "SELECT set_config('search_path', 'a', false)", "select pg_catalog.SET_CONFIG('x', 'y', ?)",
      "SELECT set_config('app.tenant', ?, false) AS t", "SELECT 1; SET search_path = t2",
      "DISCARD ALL", "SET search_path TO 'a;b'", "(SET x = 1)"})
  void settingsAreRecordedAndUndone(String sql) {
    assertEquals(SessionEffect.SETTING, SessionEffect.of(sql), sql);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT my_function()", "SELECT * FROM my_srf(1)", "SELECT public.lower('a')",
      "SELECT \"lower\"('a')", "CALL p()", "{call p(?)}", "{? = call f(?)}",
      "DO $$ BEGIN PERFORM 1; END $$", "EXECUTE p", "SELECT a FROM t JOIN f(1) ON true",
      "SELECT set_config(?, ?, false)", "SELECT set_config('a', 'b', false), count(*) FROM t",
      "SELECT 1; SELECT f()", "SELECT 'it''s' || f()", "SELECT 'a\\'' ", "SELECT 'open",
      "SELECT \"open", "SELECT $x$ open", "IMPORT FOREIGN SCHEMA s FROM SERVER x INTO y",
      "SELECT * FROM pg_temp.x", "SELECT x FROM t WHERE a === f(b)"})
  void whatTheTextCannotTellIsChecked(String sql) {
    assertEquals(SessionEffect.UNSURE, SessionEffect.of(sql), sql);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "PREPARE p AS SELECT 1", "DECLARE c CURSOR WITH HOLD FOR SELECT 1", "LISTEN ch",
      "CREATE TEMP TABLE t (a int)", "create temporary view v as select 1",
      "CREATE GLOBAL TEMPORARY TABLE t (a int)", "CREATE OR REPLACE TEMP VIEW v AS SELECT 1",
      "CREATE TABLE pg_temp.t (a int)", "SELECT * INTO TEMP t FROM u",
      "SELECT pg_advisory_lock(1)", "SELECT pg_try_advisory_lock(?), pg_catalog.now()",
      "select pg_catalog.pg_advisory_lock_shared(1)", "SELECT setseed(0.5)", "SET seed = 0.5",
      "LOAD 'auto_explain'", "SELECT 1; PREPARE p AS SELECT 1", "SELECT f(); LISTEN x"})
  void stateNoResetUndoesClosesTheSession(String sql) {
    assertEquals(SessionEffect.STATEFUL, SessionEffect.of(sql), sql);
  }

  @Test
  void nullLeavesNothing() {
    assertEquals(SessionEffect.NONE, SessionEffect.of(null));
  }

  @Test
  void transactionEndsAreSeenInRawSql() {
    for (String sql : new String[] {"COMMIT", "rollback to savepoint a", "END", "abort",
        "SELECT 1; ROLLBACK"}) {
      assertTrue(SessionEffect.endsOrRewinds(sql), sql);
    }
    for (String sql : new String[] {"SELECT 1", "SAVEPOINT a", "SELECT 'commit'", "", null}) {
      assertFalse(SessionEffect.endsOrRewinds(sql), sql);
    }
  }
}
