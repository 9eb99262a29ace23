package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** How a connector's sessions get their settings, and when that changes. */
class StartupSettingsTest {
  private static final SQLException REFUSED =
      new SQLException("FATAL: unsupported startup parameter: options", "08P01");

  private static Map<String, String> primary() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("statement_timeout", "15000");
    s.put("idle_in_transaction_session_timeout", "60000");
    return s;
  }

  private static Properties props() {
    Properties p = new Properties();
    p.setProperty("options", "-c statement_timeout=15000");
    p.setProperty("ApplicationName", "api");
    return p;
  }

  @Test
  void aRefusalTurnsTheConnectorToPerTransactionSettings() throws SQLException {
    StartupSettings s = new StartupSettings(primary(), null, false);
    Properties p = props();
    assertSame(p, s.forConnect(p, "api primary"), "the startup packet carries them at first");
    assertNull(s.perTransaction());
    assertTrue(s.sendsOptions());
    assertFalse(s.refused(new SQLException("FATAL: password authentication failed", "28P01"),
        "api primary", true, null));
    assertTrue(s.refused(REFUSED, "api primary", true, null));
    Properties q = s.forConnect(p, "api primary");
    assertNull(q.getProperty("options"));
    assertEquals("api", q.getProperty("ApplicationName"));
    assertNotNull(p.getProperty("options"), "the connector's own properties are left alone");
    assertTrue(s.perTransaction().block.startsWith("SET LOCAL statement_timeout = '15000';"));
    assertFalse(s.sendsOptions());
    assertNull(s.pinned(), "omnium's own sessions never set them for the session");
    // refused again without our options: a pgjdbc property the pooler does not track
    SQLException again = assertThrows(SQLException.class, () -> s.refused(
        new SQLException("FATAL: unsupported startup parameter: search_path", "08P01"), "api",
        false, null));
    assertTrue(again.getMessage().contains("currentSchema")
        && again.getMessage().contains("ignore_startup_parameters"), again.getMessage());
  }

  @Test
  void withoutProofOfPinnedSessionsTheApplicationsRoutesGetThemPerTransaction()
      throws SQLException {
    StartupSettings s = new StartupSettings(primary(), null, false, true);
    int[] opened = {0};
    assertTrue(s.refused(REFUSED, "api primary", true, () -> {
      opened[0]++;
      throw new SQLException("the pooler's pool is full", "08001");
    }));
    assertEquals(1, opened[0], "the proof was tried");
    assertNull(s.pinned());
    assertTrue(s.perTransaction().block.startsWith("SET LOCAL statement_timeout = '15000';"));
    // decided once: a second refusal (a connect that was under way) tries nothing more
    assertTrue(s.refused(REFUSED, "api primary", true, () -> {
      throw new AssertionError("tried again");
    }));
  }

  @Test
  void poolerTransactionNeverSendsThemAndKeepsTheUsersSettings() throws SQLException {
    StartupSettings s = new StartupSettings(primary(), "-c search_path=app,public", true);
    Properties q = s.forConnect(props(), "api primary");
    assertNull(q.getProperty("options"));
    assertEquals("SET LOCAL search_path = 'app', 'public'; SET LOCAL statement_timeout = '15000';"
        + " SET LOCAL idle_in_transaction_session_timeout = '60000'; ", s.perTransaction().block);
  }

  @Test
  void optionsThatAreNotSettingsCannotGoPerTransaction() {
    StartupSettings s = new StartupSettings(primary(), "-c a=b --debug", true);
    SQLException e = assertThrows(SQLException.class, () -> s.forConnect(props(), "api"));
    assertEquals("08001", e.getSQLState());
    assertTrue(e.getMessage().contains("--debug") || e.getMessage().contains("debug"),
        e.getMessage());
  }

  @Test
  void libpqOptionsParse() {
    Map<String, String> m = StartupSettings.parseOptions("-c a=1 -cb=2  --c-d=3 -c e=x\\ y");
    assertEquals(Map.of("a", "1", "b", "2", "c_d", "3", "e", "x y"), m);
    assertEquals(Map.of(), StartupSettings.parseOptions(null));
    assertThrows(IllegalArgumentException.class, () -> StartupSettings.parseOptions("-c a"));
    assertThrows(IllegalArgumentException.class, () -> StartupSettings.parseOptions("-F"));
  }
}
