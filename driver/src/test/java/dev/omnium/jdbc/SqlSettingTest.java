package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which setting each SQL change touches, and what a logical connection keeps of them. */
class SqlSettingTest {
  private static String parsed(String sql) {
    List<SqlSetting> changes = SqlSetting.parse(sql);
    if (changes == null) return null;
    List<String> out = new ArrayList<>();
    for (SqlSetting c : changes) {
      out.add(switch (c.action()) {
        case SqlSetting.SET -> "set " + c.key() + ": " + c.sql();
        case SqlSetting.RESET -> "reset " + c.key();
        case SqlSetting.RESET_ALL -> "reset all";
        default -> "discard all";
      });
    }
    return String.join(" | ", out);
  }

  /** Each change's transaction-local form, as a pooler needs it, or "none". */
  private static String local(String sql) {
    List<String> out = new ArrayList<>();
    for (SqlSetting c : SqlSetting.parse(sql)) {
      String l = c.localSql();
      out.add(l == null ? "none" : l);
    }
    return String.join(" | ", out);
  }

  @Test
  void eachSetHasATransactionLocalForm() {
    assertEquals("SET LOCAL search_path = tenant_a", local("SET search_path = tenant_a"));
    assertEquals("SET LOCAL Search_Path to 'a', b", local("set session Search_Path to 'a', b;"));
    assertEquals("SET LOCAL TIME ZONE 'UTC'", local("SET TIME ZONE 'UTC'"));
    assertEquals("SET LOCAL ROLE reader", local("SET ROLE reader"));
    assertEquals("SET LOCAL SESSION AUTHORIZATION alice",
        local("SET SESSION AUTHORIZATION alice"));
    assertEquals("SET LOCAL \"app\".tenant = 5", local("SET \"app\".tenant = 5"));
    // the transaction's own isolation and read-only mode, set before its first query
    assertEquals("SET LOCAL transaction_isolation = 'serializable'",
        local("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE"));
    assertEquals("SET LOCAL transaction_read_only TO on",
        local("SET default_transaction_read_only TO on"));
    assertEquals("SELECT set_config('app.tenant', '7', true)",
        local("SELECT set_config('app.tenant', '7', false)"));
    assertEquals("select set_config('app.a', 'x', true) AS a",
        local("select set_config('app.a', 'x', FALSE ) AS a"));
    // resets carry nothing: the server's default holds in a transaction behind a pooler
    assertEquals("none", local("RESET search_path"));
  }

  @Test
  void eachFormNamesItsSetting() {
    assertEquals("set search_path: SET search_path = tenant_a",
        parsed("SET search_path = tenant_a"));
    assertEquals("set search_path: set session Search_Path to 'a', b",
        parsed("set session Search_Path to 'a', b;"));
    assertEquals("set app.tenant: SET \"app\".tenant = 5", parsed("SET \"app\".tenant = 5"));
    assertEquals("set timezone: SET TIME ZONE 'UTC'", parsed("SET TIME ZONE 'UTC'"));
    assertEquals("reset timezone", parsed("SET TIME ZONE LOCAL"));
    assertEquals("reset search_path", parsed("SET search_path TO DEFAULT"));
    assertEquals("set search_path: SET SCHEMA 'x'", parsed("SET SCHEMA 'x'"));
    assertEquals("set client_encoding: SET NAMES 'UTF8'", parsed("SET NAMES 'UTF8'"));
    assertEquals("set xmloption: SET XML OPTION DOCUMENT", parsed("SET XML OPTION DOCUMENT"));
    assertEquals("set role: SET ROLE limited", parsed("SET ROLE limited"));
    assertEquals("reset role", parsed("RESET ROLE"));
    assertEquals("set session_authorization: SET SESSION AUTHORIZATION u",
        parsed("SET SESSION AUTHORIZATION u"));
    assertEquals("reset session_authorization", parsed("SET SESSION AUTHORIZATION DEFAULT"));
    assertEquals("reset session_authorization", parsed("RESET SESSION AUTHORIZATION"));
    assertEquals("reset all", parsed("RESET ALL"));
    assertEquals("discard all", parsed("DISCARD ALL"));
    assertEquals("reset timezone", parsed("RESET TIME ZONE"));
    assertEquals("set search_path: SELECT set_config('Search_Path', 'a', false)",
        parsed("SELECT set_config('Search_Path', 'a', false)"));
    assertEquals("set default_transaction_isolation: SET default_transaction_isolation ="
            + " 'repeatable read' | set default_transaction_read_only:"
            + " SET default_transaction_read_only = off",
        parsed("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ,"
            + " READ WRITE"));
    assertEquals("set search_path: SET search_path = t2",
        parsed("SELECT 1; SET search_path = t2"));
    assertNull(parsed("SELECT 1; SELECT set_config('a', ?, false)"),
        "a bound value of one statement of several cannot be told apart");
  }

  @Test
  void aLogicalConnectionKeepsTheLastChangeOfEachSetting() throws Exception {
    SqlSettings s = new SqlSettings();
    assertTrue(s.isEmpty());
    s.record(SqlSetting.parse("SET search_path = a"));
    s.record(SqlSetting.parse("SET ROLE limited"));
    s.record(SqlSetting.parse("SET TimeZone = 'UTC'; SET search_path = b"));
    assertEquals(List.of("SET ROLE limited; SET TimeZone = 'UTC'; SET search_path = b"),
        replayed(s, Route.PRIMARY));
    s.record(SqlSetting.parse("RESET ALL"));
    assertEquals(List.of("SET ROLE limited"), replayed(s, Route.PRIMARY),
        "RESET ALL leaves the role, as PostgreSQL does");
    s.record(SqlSetting.parse("SET SESSION AUTHORIZATION u"));
    assertEquals(List.of("SET SESSION AUTHORIZATION u"), replayed(s, Route.PRIMARY),
        "a session authorization resets the role");
    s.record(SqlSetting.parse("RESET SESSION AUTHORIZATION"));
    assertTrue(s.isEmpty());
    s.record(SqlSetting.parse("SET search_path = a"));
    s.supersede("search_path");
    assertTrue(s.isEmpty(), "a JDBC setSchema owns search_path from then on");
  }

  @Test
  void readRoutesKeepTheirProtections() throws Exception {
    SqlSettings s = new SqlSettings();
    s.record(SqlSetting.parse("SET default_transaction_read_only = off"));
    s.record(SqlSetting.parse("SET statement_timeout = 0"));
    List<String> read = replayed(s, Route.REPLICA);
    assertEquals(1, read.size(), "one round trip");
    assertTrue(read.get(0).startsWith("SET default_transaction_read_only = off;"
        + " SET statement_timeout = 0; SET default_transaction_read_only = on; SELECT set_config("),
        read.get(0));
    assertEquals(List.of("SET default_transaction_read_only = off; SET statement_timeout = 0"),
        replayed(s, Route.PRIMARY), "the primary takes the user's values as they are");
  }

  /** A replica session behind a pooler that pins sessions: it set these itself. */
  private static PinnedSettings pinnedReplica() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("statement_timeout", "2000");
    m.put("idle_in_transaction_session_timeout", "30000");
    m.put("default_transaction_read_only", "on");
    return new PinnedSettings(m);
  }

  @Test
  void aPinnedSessionCapsItsTimeoutsAtItsOwnValuesNotTheServersDefaults() throws Exception {
    SqlSettings s = new SqlSettings();
    s.record(SqlSetting.parse("SET statement_timeout = 0"));
    List<String> read = replayed(s, Route.REPLICA, pinnedReplica());
    assertEquals(1, read.size(), "one round trip");
    // RESET would go back to the server's default here: the caps are the session's own values
    assertTrue(read.get(0).startsWith("SET statement_timeout = 0; SELECT set_config(s.name,"
        + " CASE WHEN r.v > 0"), read.get(0));
    assertTrue(read.get(0).endsWith(" FROM (VALUES ('statement_timeout', 2000),"
        + " ('idle_in_transaction_session_timeout', 30000)) r(name, v) JOIN pg_settings s"
        + " USING (name)"), read.get(0));
  }

  @Test
  void aResetOnAPinnedSessionGoesBackToItsOwnValues() throws Exception {
    PinnedSettings pinned = pinnedReplica();
    String all = "SET statement_timeout = '2000'; SET idle_in_transaction_session_timeout ="
        + " '30000'; SET default_transaction_read_only = 'on'";
    assertEquals(all, pinned.set, "what the session sets when it opens and after a reset");
    assertEquals(all, pinned.restoring(SqlSetting.parse("RESET ALL")));
    assertEquals("SET statement_timeout = '2000'",
        pinned.restoring(SqlSetting.parse("RESET statement_timeout")));
    assertEquals("SET idle_in_transaction_session_timeout = '30000';"
        + " SET default_transaction_read_only = 'on'",
        pinned.restoring(SqlSetting.parse("DISCARD ALL; SET statement_timeout = 0")),
        "a setting the user set after the reset stays theirs");
    assertEquals("", pinned.restoring(SqlSetting.parse("SET TIME ZONE 'UTC'")));
  }

  @Test
  void settingsOfATransactionHoldOnceItCommits() {
    SqlSettings s = new SqlSettings();
    s.pend(SqlSetting.parse("SET search_path = a"));
    assertNull(s.transactionEnded(false));
    assertTrue(s.isEmpty(), "rolled back");
    s.pend(SqlSetting.parse("SET search_path = a"));
    assertEquals(1, s.transactionEnded(true).size());
    assertFalse(s.isEmpty(), "committed");
    s.pend(SqlSetting.parse("SET search_path = b"));
    s.rewound();
    assertNull(s.transactionEnded(true), "a savepoint rolled back: which holds is unknown");
    assertFalse(s.hasPending());
  }

  @Test
  void aDefaultIsolationOfSerializableKeepsReadsOffStandbys() {
    SqlSettings s = new SqlSettings();
    s.record(SqlSetting.parse("SET default_transaction_isolation = 'serializable'"));
    assertTrue(s.serializable());
    s.record(SqlSetting.parse("RESET default_transaction_isolation"));
    assertFalse(s.serializable());
    s.record(SqlSetting.parse(
        "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE"));
    assertTrue(s.serializable());
  }

  /** What the replay sends to a session: each statement's SQL. */
  private static List<String> replayed(SqlSettings s, Route route) throws Exception {
    return replayed(s, route, null);
  }

  /** The same on a session that set its settings itself ({@code pinned}). */
  private static List<String> replayed(SqlSettings s, Route route, PinnedSettings pinned)
      throws Exception {
    List<String> sent = new ArrayList<>();
    InvocationHandler statement = (proxy, m, args) -> {
      if (m.getName().equals("execute")) sent.add((String) args[0]);
      return m.getReturnType() == boolean.class ? false : null;
    };
    ClassLoader loader = SqlSettingTest.class.getClassLoader();
    InvocationHandler connection = (proxy, m, args) -> m.getName().equals("createStatement")
        ? Proxy.newProxyInstance(loader, new Class<?>[] {Statement.class}, statement) : null;
    s.replayOn((Connection) Proxy.newProxyInstance(loader,
        new Class<?>[] {Connection.class}, connection), route, pinned);
    return sent;
  }
}
