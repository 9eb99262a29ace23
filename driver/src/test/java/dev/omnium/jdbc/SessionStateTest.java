package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SessionStateTest {
  /** The remembered answers are StatementKind's, whatever order the strings come in. */
  @Test
  void settingChangesAreRememberedPerStringAndAlwaysStatementKindsAnswer() throws Exception {
    Router router = StubSessions.router("unit-session-state");
    try {
      SessionState s = new SessionState(router, router.primary(), null);
      String[] sql = {"SELECT a FROM t WHERE account_id = ?", "SET search_path = other",
          "select set_config('TimeZone', 'UTC', false)", "SELECT 1", null, "RESET ALL",
          new String("SELECT 1"), "SELECT a FROM t WHERE account_id = ?"};
      for (int round = 0; round < 3; round++) {
        for (String q : sql) {
          assertEquals(StatementKind.maySetSession(q), s.maySetSession(q), q);
        }
        for (int i = sql.length - 1; i >= 0; i--) {
          assertEquals(StatementKind.maySetSession(sql[i]), s.maySetSession(sql[i]), sql[i]);
        }
      }
    } finally {
      router.close();
    }
  }
}
