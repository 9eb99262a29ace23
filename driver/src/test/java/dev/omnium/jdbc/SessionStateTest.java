package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SessionStateTest {
  /** The remembered answers are SessionEffect's, whatever order the strings come in. */
  @Test
  void sessionEffectsAreRememberedPerStringAndAlwaysSessionEffectsAnswer() throws Exception {
    Router router = StubSessions.router("unit-session-state");
    try {
      SessionState s = new SessionState(router, router.primary(), null);
      String[] sql = {"SELECT a FROM t WHERE account_id = ?", "SET search_path = other",
          "select set_config('TimeZone', 'UTC', false)", "SELECT 1", null, "RESET ALL",
          new String("SELECT 1"), "SELECT my_function()", "PREPARE p AS SELECT 1",
          "SELECT a FROM t WHERE account_id = ?"};
      for (int round = 0; round < 3; round++) {
        for (String q : sql) {
          assertEquals(SessionEffect.of(q), s.sessionEffect(q), q);
        }
        for (int i = sql.length - 1; i >= 0; i--) {
          assertEquals(SessionEffect.of(sql[i]), s.sessionEffect(sql[i]), sql[i]);
        }
      }
    } finally {
      router.close();
    }
  }
}
