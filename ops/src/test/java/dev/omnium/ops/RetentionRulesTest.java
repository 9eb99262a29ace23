package dev.omnium.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class RetentionRulesTest {

  @Test
  void readsBothKindsCommentsAndBlankLines() {
    List<RetentionRule> rules = RetentionRules.parse("r.rules", String.join("\n",
        "# retention of the match service",
        "",
        "integration_row month created_at 30d",
        "  app.stat_change   MONTH changed_on 90d   # already monthly",
        "procrastinate_jobs delete finished_at 7d where status = 'succeeded' # old jobs",
        "alert_signal delete at 7d",
        "notes delete at 3d WHERE body <> '# not a comment'"));
    assertEquals(5, rules.size());
    assertEquals("integration_row month created_at 30d", rules.get(0).toString());
    assertEquals("r.rules:3", rules.get(0).source());
    assertEquals("app.stat_change", rules.get(1).table());
    assertEquals(RetentionRule.Kind.MONTH, rules.get(1).kind());
    assertEquals(90, rules.get(1).keepDays());
    assertEquals("status = 'succeeded'", rules.get(2).where());
    assertNull(rules.get(3).where());
    assertEquals("body <> '# not a comment'", rules.get(4).where());
  }

  @Test
  void aBadLineIsAnErrorNamingTheFileAndLine() {
    assertError("r:2: unknown kind 'monthly'", "a month c 30d\nb monthly c 30d");
    assertError("r:1: bad keep '30'", "a month c 30");
    assertError("r:1: bad keep '30h'", "a month c 30h");
    assertError("r:1: expected TABLE month COLUMN KEEP", "a month c");
    assertError("r:1: unexpected 'extra' after KEEP", "a month c 3d extra");
    assertError("r:1: unexpected 'where x = 1' after KEEP: a month rule",
        "a month c 3d where x = 1");
    assertError("r:1: 'where' needs a condition", "a delete c 3d where");
    assertError("r:1: the where condition must be one SQL expression",
        "a delete c 3d where x = 1; drop table a");
    assertError("r:1: bad table name 'a-b'", "a-b delete c 3d");
    assertError("r:1: bad column name 'c.d'", "a delete c.d 3d");
    assertError("r:1: keep must be between 1d", "a delete c 0d");
    assertError("r:3: a has a month rule already", "a month c 3d\n\na month d 4d");
    assertError("is longer than 55 characters", "a".repeat(56) + " month c 3d");
  }

  @Test
  void javaRulesAreCheckedTheSameWay() {
    assertEquals("events month at 30d", RetentionRule.month("Events", "AT", 30).toString());
    assertEquals("jobs delete done 7d where ok", RetentionRule.delete("jobs", "done", 7, "ok")
        .toString());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RetentionRule.month("events", "at", 0));
    assertTrue(e.getMessage().contains("keep must be between 1d"), e.getMessage());
  }

  private static void assertError(String expected, String text) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RetentionRules.parse("r", text));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }
}
