package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The two forms a transaction's settings take behind a pooler. */
class TransactionSettingsTest {

  @Test
  void aReadRouteSetsItsTimeoutsAndReadOnlyForTheTransaction() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("statement_timeout", "5000");
    s.put("idle_in_transaction_session_timeout", "60000");
    s.put("default_transaction_read_only", "on");
    TransactionSettings t = TransactionSettings.of(s);
    assertEquals("SET LOCAL statement_timeout = '5000'; SET LOCAL"
        + " idle_in_transaction_session_timeout = '60000';"
        + " SET LOCAL transaction_read_only = 'on'; ", t.block);
    assertEquals(3, t.blockResults);
    assertEquals("SET LOCAL statement_timeout = '5000'; SET LOCAL"
        + " idle_in_transaction_session_timeout = '60000'; ", t.blockAfterReadOnlyBegin,
        "after pgjdbc's BEGIN READ ONLY");
    assertEquals(2, t.blockAfterReadOnlyBeginResults);
    // an autocommit statement is never idle in its transaction
    assertEquals("SELECT set_config('statement_timeout', '5000', true),"
        + " set_config('transaction_read_only', 'on', true); ", t.implicit);
    assertTrue(t.readOnly());
  }

  @Test
  void nothingToSetInAutocommitIsNoStatement() {
    TransactionSettings t = TransactionSettings.of(
        Map.of("idle_in_transaction_session_timeout", "1000"));
    assertEquals("", t.implicit);
    assertEquals(1, t.blockResults);
  }

  @Test
  void listsAndQuotesKeepTheirMeaning() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("search_path", "app,public");
    s.put("application_name", "it's");
    TransactionSettings t = TransactionSettings.of(s);
    assertEquals("SET LOCAL search_path = 'app', 'public'; SET LOCAL application_name = 'it''s'; ",
        t.block);
    assertEquals("SELECT set_config('search_path', 'app,public', true),"
        + " set_config('application_name', 'it''s', true); ", t.implicit);
    assertFalse(t.readOnly());
  }

  @Test
  void theStartOfAStatementSaysHowItCarriesThem() {
    assertEquals(StatementStart.TRANSACTION_CONTROL, StatementStart.of("BEGIN"));
    assertEquals(StatementStart.TRANSACTION_CONTROL, StatementStart.of("  begin isolation level"
        + " serializable"));
    assertEquals(StatementStart.TRANSACTION_CONTROL, StatementStart.of("-- a comment\nCOMMIT"));
    assertEquals(StatementStart.TRANSACTION_CONTROL, StatementStart.of("/* c */ rollback"));
    assertEquals(StatementStart.TRANSACTION_CONTROL, StatementStart.of("START TRANSACTION"));
    assertEquals(StatementStart.TRANSACTION_CONTROL, StatementStart.of("SAVEPOINT a"));
    assertEquals(StatementStart.TRANSACTION_CONTROL,
        StatementStart.of("set transaction isolation level repeatable read"));
    assertEquals(StatementStart.TRANSACTION_CONTROL, StatementStart.of("PREPARE TRANSACTION 'x'"));
    assertEquals(StatementStart.OTHER, StatementStart.of("PREPARE q AS SELECT 1"));
    assertEquals(StatementStart.OTHER, StatementStart.of("SET search_path = app"));
    assertEquals(StatementStart.OTHER, StatementStart.of("SET LOCAL statement_timeout = 1"));
    assertEquals(StatementStart.OTHER, StatementStart.of("select 1"));
    assertEquals(StatementStart.OTHER, StatementStart.of("(SELECT 1) UNION (SELECT 2)"));
    assertEquals(StatementStart.OTHER, StatementStart.of("{call f(?)}"));
    assertEquals(StatementStart.OTHER, StatementStart.of(""));
    assertEquals(StatementStart.OTHER, StatementStart.of("CREATE INDEX i ON t (a)"));
    assertEquals(StatementStart.NO_TRANSACTION_BLOCK, StatementStart.of("VACUUM t"));
    assertEquals(StatementStart.NO_TRANSACTION_BLOCK,
        StatementStart.of("create index concurrently i on t (a)"));
    assertEquals(StatementStart.NO_TRANSACTION_BLOCK,
        StatementStart.of("DROP INDEX CONCURRENTLY i"));
    assertEquals(StatementStart.NO_TRANSACTION_BLOCK, StatementStart.of("CREATE DATABASE d"));
    assertEquals(StatementStart.NO_TRANSACTION_BLOCK, StatementStart.of("ALTER SYSTEM SET x = 1"));
    assertEquals(StatementStart.NO_TRANSACTION_BLOCK, StatementStart.of("CALL p()"));
    assertEquals(StatementStart.DISCARD, StatementStart.of("discard all"));
  }
}
