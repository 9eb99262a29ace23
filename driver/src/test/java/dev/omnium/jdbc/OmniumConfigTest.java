package dev.omnium.jdbc;

import static dev.omnium.jdbc.OmniumPropertyTest.props;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.postgresql.Driver;

class OmniumConfigTest {

  private static final String PASSWORD = "s3cr3t-pw";
  private static final String REPLICA_PASSWORD = "r3pl1ca-s3cr3t";
  private static final String BASE = "jdbc:omnium:postgresql://primary/db";

  private static void assertNoSecret(String text) {
    assertFalse(text.contains(PASSWORD), text);
    assertFalse(text.contains(REPLICA_PASSWORD), text);
  }

  private static SQLException fails(String url, Properties info) {
    SQLException e = assertThrows(SQLException.class, () -> OmniumConfig.of(url, info));
    assertEquals("08001", e.getSQLState());
    assertNoSecret(e.getMessage());
    return e;
  }

  private static Map<String, String> asMap(Properties p) {
    Map<String, String> m = new HashMap<>();
    for (String k : p.stringPropertyNames()) {
      m.put(k, p.getProperty(k));
    }
    return m;
  }

  @Test
  void defaults() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE, null);
    assertEquals(List.of(new HostSpec("primary", 5432)), c.primaryHosts());
    assertEquals("db", c.database());
    assertEquals(List.of(), c.replicas());
    assertFalse(c.hasReplicas());
    assertEquals(Duration.ofSeconds(5), c.maxAge());
    assertEquals(Duration.ofSeconds(1), c.heartbeatInterval());
    assertEquals("replica_heartbeat", c.heartbeatTable());
    assertFalse(c.heartbeatWriter());
    assertEquals("omnium", c.applicationName());
    assertEquals(Duration.ofSeconds(15), c.statementTimeout());
    assertEquals(Duration.ofSeconds(5), c.replicaStatementTimeout());
    assertEquals(Duration.ofSeconds(60), c.idleInTransactionTimeout());
    assertNull(c.lockTimeout());
    assertEquals(15, c.primaryPoolSize());
    assertEquals(8, c.replicaPoolSize());
    assertEquals(4, c.fallbackPoolSize());
    assertEquals(Duration.ofSeconds(10), c.poolTimeout());
    assertEquals(Duration.ofSeconds(1), c.replicaAcquireTimeout());
    assertEquals(Duration.ofMinutes(30), c.maxLifetime());
    assertEquals(Duration.ofSeconds(10), c.lagAlertThreshold());
    assertEquals(Duration.ofSeconds(60), c.lagAlertAfter());
    assertEquals("off", c.readYourWrites());
    assertEquals(Duration.ofSeconds(30), c.readYourWritesTtl());
  }

  @Test
  void everySettingFromTheUrl() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r1,r2:6432&replicaUser=ro&replicaPassword="
        + REPLICA_PASSWORD + "&maxAge=250ms&heartbeatInterval=2s&heartbeatTable=ops.hb"
        + "&heartbeatWriter=true&applicationName=api&statementTimeout=20s"
        + "&replicaStatementTimeout=3s&idleInTransactionTimeout=2m&lockTimeout=0"
        + "&primaryPoolSize=20&replicaPoolSize=6&fallbackPoolSize=2&poolTimeout=500ms"
        + "&replicaAcquireTimeout=300&maxLifetime=1h&lagAlertThreshold=30s&lagAlertAfter=5m"
        + "&readYourWrites=thread&readYourWritesTtl=45s", null);
    assertEquals(List.of(new HostSpec("r1", 5432), new HostSpec("r2", 6432)), c.replicas());
    assertTrue(c.hasReplicas());
    assertEquals(Duration.ofMillis(250), c.maxAge());
    assertEquals(Duration.ofSeconds(2), c.heartbeatInterval());
    assertEquals("ops.hb", c.heartbeatTable());
    assertTrue(c.heartbeatWriter());
    assertEquals("api", c.applicationName());
    assertEquals(Duration.ofSeconds(20), c.statementTimeout());
    assertEquals(Duration.ofSeconds(3), c.replicaStatementTimeout());
    assertEquals(Duration.ofMinutes(2), c.idleInTransactionTimeout());
    assertEquals(Duration.ZERO, c.lockTimeout());
    assertEquals(20, c.primaryPoolSize());
    assertEquals(6, c.replicaPoolSize());
    assertEquals(2, c.fallbackPoolSize());
    assertEquals(Duration.ofMillis(500), c.poolTimeout());
    assertEquals(Duration.ofMillis(300), c.replicaAcquireTimeout());
    assertEquals(Duration.ofHours(1), c.maxLifetime());
    assertEquals(Duration.ofSeconds(30), c.lagAlertThreshold());
    assertEquals(Duration.ofMinutes(5), c.lagAlertAfter());
    assertEquals("thread", c.readYourWrites());
    assertEquals(Duration.ofSeconds(45), c.readYourWritesTtl());
  }

  @Test
  void omniumKeysFromProperties() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE,
        props("maxAge", "7s", "replica", "r9:7000", "fallbackPoolSize", "2"));
    assertEquals(Duration.ofSeconds(7), c.maxAge());
    assertEquals(List.of(new HostSpec("r9", 7000)), c.replicas());
    assertEquals(2, c.fallbackPoolSize());
  }

  @Test
  void urlBeatsProperties() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?maxAge=3s&user=url-user&replica=url-r",
        props("maxAge", "7s", "user", "props-user", "replica", "props-r", "ssl", "true"));
    assertEquals(Duration.ofSeconds(3), c.maxAge());
    assertEquals(List.of(new HostSpec("url-r", 5432)), c.replicas());
    Properties p = c.physicalProperties(Route.PRIMARY);
    assertEquals("url-user", p.getProperty("user"));
    assertEquals("true", p.getProperty("ssl"));
  }

  @Test
  void propertiesWithDefaultsAreRead() throws SQLException {
    Properties info = new Properties(props("maxAge", "9s", "user", "dflt"));
    OmniumConfig c = OmniumConfig.of(BASE, info);
    assertEquals(Duration.ofSeconds(9), c.maxAge());
    assertEquals("dflt", c.physicalProperties(Route.PRIMARY).getProperty("user"));
  }

  @Test
  void unknownUrlKeySuggestsTheOmniumKey() {
    SQLException e = fails(BASE + "?maxage=5s&password=" + PASSWORD, null);
    assertTrue(e.getMessage().startsWith("Unknown URL parameter maxage: did you mean maxAge?"),
        e.getMessage());
    e = fails(BASE + "?REPLICA=r1", null);
    assertTrue(e.getMessage().contains("did you mean replica?"), e.getMessage());
  }

  @Test
  void unknownUrlKeySuggestsAPgjdbcKeyByCase() {
    SQLException e = fails(BASE + "?connecttimeout=5", null);
    assertTrue(e.getMessage().contains("did you mean connectTimeout?"), e.getMessage());
  }

  @Test
  void unknownUrlKeyWithoutSuggestionListsTheKeys() {
    SQLException e = fails(BASE + "?maxStaleness=5s", null);
    assertTrue(e.getMessage().startsWith("Unknown URL parameter maxStaleness ("), e.getMessage());
    assertFalse(e.getMessage().contains("did you mean"), e.getMessage());
    assertTrue(e.getMessage().contains("maxAge, heartbeatInterval"), e.getMessage());
  }

  @Test
  void unknownPropertiesKeyPassesThroughSilently() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE,
        props("hibernate.dialect", "x", "maxage", "5s", "user", "app"));
    Properties p = c.physicalProperties(Route.PRIMARY);
    assertEquals("x", p.getProperty("hibernate.dialect"));
    assertEquals("5s", p.getProperty("maxage"));
    assertEquals(Duration.ofSeconds(5), c.maxAge());
  }

  @Test
  void pgjdbcUrlKeysPassThroughToEveryRoute() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r&ssl=true&sslmode=verify-full"
        + "&connectTimeout=5&user=app&password=" + PASSWORD, null);
    for (Route r : Route.values()) {
      Properties p = c.physicalProperties(r);
      assertEquals("true", p.getProperty("ssl"), r.name());
      assertEquals("verify-full", p.getProperty("sslmode"), r.name());
      assertEquals("5", p.getProperty("connectTimeout"), r.name());
      assertEquals("app", p.getProperty("user"), r.name());
      assertEquals(PASSWORD, p.getProperty("password"), r.name());
    }
  }

  @Test
  void locationKeysBelongToThePath() throws SQLException {
    SQLException e = fails(BASE + "?PGDBNAME=other", null);
    assertTrue(e.getMessage().contains("PGDBNAME"), e.getMessage());
    // From Properties (pgjdbc data sources put them there) they are dropped: the URL decides.
    OmniumConfig c = OmniumConfig.of(BASE, props("PGDBNAME", "other", "PGHOST", "elsewhere",
        "PGPORT", "1"));
    assertEquals("db", c.database());
    Properties p = c.physicalProperties(Route.PRIMARY);
    assertNull(p.getProperty("PGDBNAME"));
    assertNull(p.getProperty("PGHOST"));
    assertNull(p.getProperty("PGPORT"));
  }

  @Test
  void badValuesFailEagerly() {
    SQLException e = fails(BASE + "?replicaPoolSize=-1", null);
    assertTrue(e.getMessage().startsWith("Invalid value for replicaPoolSize: \"-1\""),
        e.getMessage());
    e = fails(BASE + "?fallbackPoolSize=0", null);
    assertTrue(e.getMessage().contains("fallbackPoolSize"), e.getMessage());
    e = fails(BASE, props("maxAge", "5x"));
    assertEquals("Invalid value for maxAge: \"5x\" (expected a duration such as 250ms, 5s, 2m, "
        + "or plain milliseconds)", e.getMessage());
    e = fails(BASE + "?replica=r1,,r2", null);
    assertTrue(e.getMessage().startsWith("Invalid value for replica: "), e.getMessage());
    e = fails(BASE + "?replica=", null);
    assertTrue(e.getMessage().contains("empty host list"), e.getMessage());
    fails(BASE + "?heartbeatTable=hb;drop", null);
    fails(BASE + "?readYourWrites=always", null);
    fails(BASE + "?heartbeatWriter=yes", null);
  }

  @Test
  void missingDatabase() {
    SQLException e = fails("jdbc:omnium:postgresql://primary?password=" + PASSWORD, null);
    assertTrue(e.getMessage().contains("database is missing"), e.getMessage());
  }

  @Test
  void urls() throws SQLException {
    OmniumConfig c = OmniumConfig.of("jdbc:omnium:postgresql://p1,p2:5433,[::1]:5434/my%20db"
        + "?replica=r1,[2001:db8::7]", null);
    assertEquals("jdbc:postgresql://p1:5432,p2:5433,[::1]:5434/my+db", c.primaryUrl());
    assertEquals(List.of(new HostSpec("r1", 5432), new HostSpec("2001:db8::7", 5432)),
        c.replicas());
    assertEquals("jdbc:postgresql://r1:5432/my+db", c.replicaUrl(c.replicas().get(0)));
    assertEquals("jdbc:postgresql://[2001:db8::7]:5432/my+db", c.replicaUrl(c.replicas().get(1)));
    // pgjdbc reads the encoded name back as the original.
    assertEquals("my db", Driver.parseURL(c.primaryUrl(), null).getProperty("PGDBNAME"));
    assertEquals("jdbc:postgresql://primary:5432/db", OmniumConfig.of(BASE, null).primaryUrl());
  }

  @Test
  void applicationNameSuffixPerRoute() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?applicationName=api&replica=r", null);
    assertEquals("api", c.physicalProperties(Route.PRIMARY).getProperty("ApplicationName"));
    assertEquals("api:replica", c.physicalProperties(Route.REPLICA).getProperty("ApplicationName"));
    assertEquals("api:fallback",
        c.physicalProperties(Route.FALLBACK).getProperty("ApplicationName"));
    assertEquals("api:watcher",
        c.physicalProperties(Route.WATCHER).getProperty("ApplicationName"));
    assertEquals("api:heartbeat",
        c.physicalProperties(Route.HEARTBEAT).getProperty("ApplicationName"));
    assertEquals("omnium:replica",
        OmniumConfig.of(BASE,
            null).physicalProperties(Route.REPLICA).getProperty("ApplicationName"));
  }

  @Test
  void pgjdbcApplicationNameIsTheBaseWhenOmniumsIsUnset() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?ApplicationName=billing", null);
    assertEquals("billing", c.applicationName());
    assertEquals("billing:fallback",
        c.physicalProperties(Route.FALLBACK).getProperty("ApplicationName"));
    c = OmniumConfig.of(BASE + "?ApplicationName=billing&applicationName=api", null);
    assertEquals("api", c.applicationName());
    assertEquals("api", c.physicalProperties(Route.PRIMARY).getProperty("ApplicationName"));
  }

  @Test
  void optionsPerRoute() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r&statementTimeout=20s"
        + "&replicaStatementTimeout=3s&idleInTransactionTimeout=45s", null);
    String primary = "-c statement_timeout=20000 -c idle_in_transaction_session_timeout=45000";
    String replica = "-c statement_timeout=3000 -c idle_in_transaction_session_timeout=45000";
    String readOnly = " -c default_transaction_read_only=on";
    assertEquals(primary, c.physicalProperties(Route.PRIMARY).getProperty("options"));
    assertEquals(primary + readOnly, c.physicalProperties(Route.FALLBACK).getProperty("options"));
    String heartbeatTableInPublic = " -c search_path=public";
    assertEquals(primary + heartbeatTableInPublic,
        c.physicalProperties(Route.HEARTBEAT).getProperty("options"));
    assertEquals(replica + readOnly, c.physicalProperties(Route.REPLICA).getProperty("options"));
    assertEquals(replica + heartbeatTableInPublic,
        c.physicalProperties(Route.WATCHER).getProperty("options"));
  }

  @Test
  void lockTimeoutOnPrimarySideRoutesOnly() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?lockTimeout=2s", null);
    for (Route r : Route.values()) {
      String options = c.physicalProperties(r).getProperty("options");
      boolean primarySide = r == Route.PRIMARY || r == Route.FALLBACK || r == Route.HEARTBEAT;
      assertEquals(primarySide, options.contains("-c lock_timeout=2000"), r + ": " + options);
    }
    String unset = OmniumConfig.of(BASE,
        null).physicalProperties(Route.PRIMARY).getProperty("options");
    assertFalse(unset.contains("lock_timeout"), unset);
    String zero = OmniumConfig.of(BASE + "?lockTimeout=0", null)
        .physicalProperties(Route.PRIMARY).getProperty("options");
    assertTrue(zero.endsWith("-c lock_timeout=0"), zero);
  }

  @Test
  void userOptionsComeFirst() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?options=-c%20search_path%3Dapp", null);
    assertEquals("-c search_path=app -c statement_timeout=15000 "
            + "-c idle_in_transaction_session_timeout=60000 -c default_transaction_read_only=on",
        c.physicalProperties(Route.FALLBACK).getProperty("options"));
    // the watcher resolves the heartbeat table in public whatever the application's search_path
    assertEquals("-c search_path=app -c statement_timeout=5000 "
            + "-c idle_in_transaction_session_timeout=60000 -c search_path=public",
        c.physicalProperties(Route.WATCHER).getProperty("options"));
    // The same from Properties, with stray whitespace.
    c = OmniumConfig.of(BASE, props("options", "  -c work_mem=64MB "));
    assertEquals("-c work_mem=64MB -c statement_timeout=15000 "
        + "-c idle_in_transaction_session_timeout=60000",
        c.physicalProperties(Route.PRIMARY).getProperty("options"));
  }

  @Test
  void readOnlyFlagOnlyOnReplicaAndFallback() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r", null);
    for (Route r : Route.values()) {
      boolean readOnly = c.physicalProperties(r).getProperty("options")
          .contains("default_transaction_read_only=on");
      assertEquals(r == Route.REPLICA || r == Route.FALLBACK, readOnly, r.name());
    }
  }

  @Test
  void assumeMinServerVersion() throws SQLException {
    for (Route r : Route.values()) {
      assertEquals("9.0", OmniumConfig.of(BASE, null).physicalProperties(r)
          .getProperty("assumeMinServerVersion"), r.name());
    }
    assertEquals("14", OmniumConfig.of(BASE + "?assumeMinServerVersion=14", null)
        .physicalProperties(Route.REPLICA).getProperty("assumeMinServerVersion"));
    assertEquals("9.4", OmniumConfig.of(BASE, props("assumeMinServerVersion", "9.4"))
        .physicalProperties(Route.PRIMARY).getProperty("assumeMinServerVersion"));
    assertEquals("9.0", OmniumConfig.of(BASE + "?assumeMinServerVersion=9.0", null)
        .physicalProperties(Route.PRIMARY).getProperty("assumeMinServerVersion"));
    assertEquals("9.0", OmniumConfig.of(BASE + "?assumeMinServerVersion=8.4", null)
        .physicalProperties(Route.PRIMARY).getProperty("assumeMinServerVersion"));
  }

  @Test
  void replicaCredentialsOverrideOnReplicaSideRoutesOnly() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r&user=app&password=" + PASSWORD
        + "&replicaUser=ro&replicaPassword=" + REPLICA_PASSWORD, null);
    for (Route r : Route.values()) {
      Properties p = c.physicalProperties(r);
      boolean replicaSide = r == Route.REPLICA || r == Route.WATCHER;
      assertEquals(replicaSide ? "ro" : "app", p.getProperty("user"), r.name());
      assertEquals(replicaSide ? REPLICA_PASSWORD : PASSWORD, p.getProperty("password"), r.name());
    }
  }

  @Test
  void replicaUserAloneKeepsThePrimaryPassword() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r&replicaUser=ro",
        props("user", "app", "password", PASSWORD));
    Properties p = c.physicalProperties(Route.REPLICA);
    assertEquals("ro", p.getProperty("user"));
    assertEquals(PASSWORD, p.getProperty("password"));
  }

  @Test
  void targetServerType() throws SQLException {
    OmniumConfig multi = OmniumConfig.of("jdbc:omnium:postgresql://p1,p2/db?replica=r", null);
    assertEquals("primary",
        multi.physicalProperties(Route.PRIMARY).getProperty("targetServerType"));
    // The fallback finds the primary itself (PgConnector.primaryAmong): its sessions start
    // read-only, which pgjdbc's targetServerType=primary takes for a standby.
    assertNull(multi.physicalProperties(Route.FALLBACK).getProperty("targetServerType"));
    assertEquals(List.of("jdbc:postgresql://p1:5432/db", "jdbc:postgresql://p2:5432/db"),
        multi.primaryHostUrls());
    assertEquals("primary",
        multi.physicalProperties(Route.HEARTBEAT).getProperty("targetServerType"));
    assertNull(multi.physicalProperties(Route.REPLICA).getProperty("targetServerType"));
    assertNull(multi.physicalProperties(Route.WATCHER).getProperty("targetServerType"));

    OmniumConfig single = OmniumConfig.of(BASE, null);
    assertNull(single.physicalProperties(Route.PRIMARY).getProperty("targetServerType"));

    OmniumConfig own = OmniumConfig.of(
        "jdbc:omnium:postgresql://p1,p2/db?replica=r&targetServerType=preferPrimary", null);
    assertEquals("preferPrimary",
        own.physicalProperties(Route.PRIMARY).getProperty("targetServerType"));
    // Meant for the primary list; on a single standby it would refuse the connection.
    assertNull(own.physicalProperties(Route.REPLICA).getProperty("targetServerType"));
  }

  @Test
  void noOmniumKeyReachesPgjdbc() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r&replicaUser=ro&replicaPassword="
        + REPLICA_PASSWORD + "&maxAge=1s&lockTimeout=1s&readYourWrites=token&user=app",
        props("heartbeatWriter", "true", "applicationName", "api"));
    for (Route r : Route.values()) {
      Properties p = c.physicalProperties(r);
      for (OmniumProperty o : OmniumProperty.values()) {
        assertNull(p.getProperty(o.getName()), r + " has " + o.getName());
      }
    }
  }

  @Test
  void physicalPropertiesAreFresh() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?user=app", null);
    c.physicalProperties(Route.PRIMARY).setProperty("user", "mallory");
    assertEquals("app", c.physicalProperties(Route.PRIMARY).getProperty("user"));
  }

  @Test
  void exactPhysicalPropertiesForAReplica() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r&applicationName=api&user=app&password="
        + PASSWORD + "&ssl=true", null);
    assertEquals(Map.of(
        "user", "app",
        "password", PASSWORD,
        "ssl", "true",
        "ApplicationName", "api:replica",
        "assumeMinServerVersion", "9.0",
        "options", "-c statement_timeout=5000 -c idle_in_transaction_session_timeout=60000"
            + " -c default_transaction_read_only=on"),
        asMap(c.physicalProperties(Route.REPLICA)));
  }

  @Test
  void routerKeyEquality() throws SQLException {
    OmniumConfig a = OmniumConfig.of(BASE + "?replica=r1,r2&maxAge=5s&user=app&password="
        + PASSWORD, null);
    // Same configuration spelled differently: explicit defaults, ms, Properties, key order.
    OmniumConfig b = OmniumConfig.of("jdbc:omnium:postgresql://primary:5432/db?password=" + PASSWORD
        + "&maxAge=5000&replica=r1:5432,r2", props("user", "app", "fallbackPoolSize", "4"));
    assertEquals(a.routerKey(), b.routerKey());
    assertEquals(a.routerKey().hashCode(), b.routerKey().hashCode());

    // Credentials and the per-read maxAge do not split routers (rotation shares one router).
    OmniumConfig rotated = OmniumConfig.of(BASE + "?replica=r1,r2&maxAge=5s&user=app"
        + "&password=other&replicaPassword=other&sslpassword=other", null);
    assertEquals(a.routerKey(), rotated.routerKey());
    assertNotEquals(a.secretsKey(), rotated.secretsKey());
    assertEquals("other", rotated.secrets(Route.REPLICA).get("password"));
    assertEquals(a.routerKey(), OmniumConfig.of(BASE + "?replica=r1,r2&maxAge=6s&user=app"
        + "&password=" + PASSWORD, null).routerKey());
    assertNotEquals(a.routerKey(), OmniumConfig.of(BASE + "?replica=r1,r2&maxAge=5s&user=other"
        + "&password=" + PASSWORD, null).routerKey());
    assertNotEquals(a.fallbackBudgetKey(), OmniumConfig.of(BASE + "?replica=r1,r2&user=other",
        null).fallbackBudgetKey());
    assertEquals(a.fallbackBudgetKey(), OmniumConfig.of(BASE + "?user=app&fallbackPoolSize=2",
        null).fallbackBudgetKey());
    assertNotEquals(a.routerKey(), OmniumConfig.of(BASE + "?replica=r2,r1&maxAge=5s&user=app"
        + "&password=" + PASSWORD, null).routerKey());
    assertNotEquals(a.routerKey(), OmniumConfig.of("jdbc:omnium:postgresql://primary/db2"
        + "?replica=r1,r2&maxAge=5s&user=app&password=" + PASSWORD, null).routerKey());
    assertNotEquals(a.routerKey(), OmniumConfig.of(BASE + "?replica=r1,r2&maxAge=5s&user=app"
        + "&password=" + PASSWORD + "&ssl=true", null).routerKey());
  }

  @Test
  void routerKeySeesTheResolvedApplicationName() throws SQLException {
    assertNotEquals(OmniumConfig.of(BASE + "?ApplicationName=x", null).routerKey(),
        OmniumConfig.of(BASE + "?ApplicationName=x&applicationName=omnium", null).routerKey());
  }

  @Test
  void propertyInfo() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r1,r2:6432&maxAge=2s&replicaPassword="
        + REPLICA_PASSWORD + "&readYourWrites=token", null);
    DriverPropertyInfo[] infos = c.propertyInfo();
    assertEquals(OmniumProperty.values().length, infos.length);
    Map<String, DriverPropertyInfo> byName = new HashMap<>();
    for (DriverPropertyInfo i : infos) {
      byName.put(i.name, i);
      assertFalse(i.required, i.name);
      assertEquals(OmniumProperty.forName(i.name).getDescription(), i.description);
      if (i.value != null) {
        assertNoSecret(i.value);
      }
    }
    assertEquals("r1:5432,r2:6432", byName.get("replica").value);
    assertEquals("2000ms", byName.get("maxAge").value);
    assertEquals("8", byName.get("replicaPoolSize").value);
    assertEquals("false", byName.get("heartbeatWriter").value);
    assertEquals("token", byName.get("readYourWrites").value);
    assertNull(byName.get("replicaPassword").value);
    assertNull(byName.get("lockTimeout").value);
    assertArrayEquals(new String[] {"off", "thread", "token"},
        byName.get("readYourWrites").choices);
    assertArrayEquals(new String[] {"true", "false"}, byName.get("heartbeatWriter").choices);
  }

  @Test
  void toStringShowsEverySettingButNoSecret() throws SQLException {
    OmniumConfig c = OmniumConfig.of(BASE + "?replica=r1&user=app&password=" + PASSWORD
        + "&replicaPassword=" + REPLICA_PASSWORD + "&sslpassword=" + PASSWORD,
        props("password", PASSWORD));
    String s = c.toString();
    assertNoSecret(s);
    for (OmniumProperty p : OmniumProperty.values()) {
      assertTrue(s.contains(p.getName() + "="), p.getName());
    }
    assertTrue(s.contains("replicaPassword=***"), s);
    assertTrue(s.contains("password=***"), s);
    assertTrue(s.contains("sslpassword=***"), s);
    assertTrue(s.contains("user=app"), s);
    assertTrue(s.contains("maxAge=5000ms"), s);
    assertTrue(s.contains("replica=r1:5432"), s);
    assertTrue(s.startsWith("OmniumConfig{primary=[primary:5432], database=db"), s);

    String key = c.routerKey().toString();
    assertNoSecret(key);
    // Credentials are not part of the sharing key at all.
    assertFalse(key.toLowerCase(Locale.ROOT).contains("password"), key);
  }

  @Test
  void noErrorEverShowsThePassword() {
    String pw = "&password=" + PASSWORD + "&replicaPassword=" + REPLICA_PASSWORD;
    String[] urls = {
        BASE + "?maxage=1s" + pw,
        BASE + "?maxAge=x" + pw,
        BASE + "?replica=a,,b" + pw,
        BASE + "?replica=a:0" + pw,
        BASE + "?PGHOST=x" + pw,
        BASE + "?replicaPoolSize=0" + pw,
        "jdbc:omnium:postgresql://primary" + "?x=1" + pw,
        "jdbc:omnium:postgresql://u:" + PASSWORD + "@primary/db",
        "jdbc:omnium:postgresql://primary:99999/db?" + pw.substring(1),
        BASE + "?password=" + PASSWORD + "%G1",
        BASE + "?replicaPassword=" + REPLICA_PASSWORD + "%",
    };
    for (String url : urls) {
      fails(url, props("password", PASSWORD));
    }
  }
}
