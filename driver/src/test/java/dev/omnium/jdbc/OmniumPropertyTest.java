package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGProperty;

class OmniumPropertyTest {

  private static final String PASSWORD = "s3cr3t-pw";

  /** Properties from key, value pairs. */
  static Properties props(String... kv) {
    Properties p = new Properties();
    for (int i = 0; i < kv.length; i += 2) {
      p.setProperty(kv[i], kv[i + 1]);
    }
    return p;
  }

  private static SQLException invalid(OmniumProperty p, String value) {
    SQLException e = assertThrows(SQLException.class, () -> p.getValue(props(p.getName(), value)));
    assertEquals("08001", e.getSQLState());
    assertTrue(e.getMessage().startsWith("Invalid value for " + p.getName() + ": "),
        e.getMessage());
    assertTrue(e.getMessage().contains(p.expected()), e.getMessage());
    return e;
  }

  @Test
  void theKeysOfTheDesignTableExactlyInOrder() {
    String[] expected = {"replica", "replicaUser", "replicaPassword", "maxAge",
        "heartbeatInterval", "heartbeatTable", "heartbeatWriter", "applicationName",
        "statementTimeout", "replicaStatementTimeout", "idleInTransactionTimeout", "lockTimeout",
        "primaryPoolSize", "replicaPoolSize", "fallbackPoolSize", "poolTimeout",
        "replicaAcquireTimeout", "maxLifetime", "poolIdleTimeout", "clientTimeoutMargin",
        "routerIdleTimeout",
        "lagAlertThreshold", "lagAlertAfter",
        "readYourWrites", "readYourWritesTtl", "pooler"};
    OmniumProperty[] all = OmniumProperty.values();
    assertEquals(expected.length, all.length);
    for (int i = 0; i < all.length; i++) {
      assertEquals(expected[i], all[i].getName());
    }
  }

  @Test
  void everyDefaultAsText() {
    Map<String, String> defaults = new LinkedHashMap<>();
    for (OmniumProperty p : OmniumProperty.values()) {
      defaults.put(p.getName(), p.getDefaultValue());
    }
    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("replica", null);
    expected.put("replicaUser", null);
    expected.put("replicaPassword", null);
    expected.put("maxAge", "5s");
    expected.put("heartbeatInterval", "1s");
    expected.put("heartbeatTable", "replica_heartbeat");
    expected.put("heartbeatWriter", "false");
    expected.put("applicationName", "omnium");
    expected.put("statementTimeout", "15s");
    expected.put("replicaStatementTimeout", "5s");
    expected.put("idleInTransactionTimeout", "60s");
    expected.put("lockTimeout", null);
    expected.put("primaryPoolSize", "15");
    expected.put("replicaPoolSize", "8");
    expected.put("fallbackPoolSize", "4");
    expected.put("poolTimeout", "10s");
    expected.put("replicaAcquireTimeout", "1s");
    expected.put("maxLifetime", "30m");
    expected.put("poolIdleTimeout", "1m");
    expected.put("clientTimeoutMargin", "2s");
    expected.put("routerIdleTimeout", "10m");
    expected.put("lagAlertThreshold", "10s");
    expected.put("lagAlertAfter", "60s");
    expected.put("readYourWrites", "off");
    expected.put("readYourWritesTtl", "30s");
    expected.put("pooler", "auto");
    assertEquals(expected, defaults);
  }

  @Test
  void everyDefaultTyped() throws SQLException {
    Properties empty = new Properties();
    assertEquals(List.of(), OmniumProperty.REPLICA.getHosts(empty));
    assertNull(OmniumProperty.REPLICA_USER.get(empty));
    assertNull(OmniumProperty.REPLICA_PASSWORD.get(empty));
    assertEquals(Duration.ofSeconds(5), OmniumProperty.MAX_AGE.getDuration(empty));
    assertEquals(Duration.ofSeconds(1), OmniumProperty.HEARTBEAT_INTERVAL.getDuration(empty));
    assertEquals("replica_heartbeat", OmniumProperty.HEARTBEAT_TABLE.get(empty));
    assertFalse(OmniumProperty.HEARTBEAT_WRITER.getBoolean(empty));
    assertEquals("omnium", OmniumProperty.APPLICATION_NAME.get(empty));
    assertEquals(Duration.ofSeconds(15), OmniumProperty.STATEMENT_TIMEOUT.getDuration(empty));
    assertEquals(Duration.ofSeconds(5),
        OmniumProperty.REPLICA_STATEMENT_TIMEOUT.getDuration(empty));
    assertEquals(Duration.ofSeconds(60),
        OmniumProperty.IDLE_IN_TRANSACTION_TIMEOUT.getDuration(empty));
    assertNull(OmniumProperty.LOCK_TIMEOUT.getDuration(empty));
    assertEquals(15, OmniumProperty.PRIMARY_POOL_SIZE.getSize(empty));
    assertEquals(8, OmniumProperty.REPLICA_POOL_SIZE.getSize(empty));
    assertEquals(4, OmniumProperty.FALLBACK_POOL_SIZE.getSize(empty));
    assertEquals(Duration.ofSeconds(10), OmniumProperty.POOL_TIMEOUT.getDuration(empty));
    assertEquals(Duration.ofSeconds(1), OmniumProperty.REPLICA_ACQUIRE_TIMEOUT.getDuration(empty));
    assertEquals(Duration.ofMinutes(30), OmniumProperty.MAX_LIFETIME.getDuration(empty));
    assertEquals(Duration.ofMinutes(1), OmniumProperty.POOL_IDLE_TIMEOUT.getDuration(empty));
    assertEquals(Duration.ofSeconds(10), OmniumProperty.LAG_ALERT_THRESHOLD.getDuration(empty));
    assertEquals(Duration.ofSeconds(60), OmniumProperty.LAG_ALERT_AFTER.getDuration(empty));
    assertEquals("off", OmniumProperty.READ_YOUR_WRITES.get(empty));
    assertEquals(Duration.ofSeconds(30), OmniumProperty.READ_YOUR_WRITES_TTL.getDuration(empty));
    // A null Properties reads as empty.
    assertEquals(Duration.ofSeconds(5), OmniumProperty.MAX_AGE.getDuration(null));
  }

  @Test
  void kinds() {
    assertEquals(OmniumProperty.Kind.HOSTS, OmniumProperty.REPLICA.getKind());
    assertEquals(OmniumProperty.Kind.STRING, OmniumProperty.REPLICA_PASSWORD.getKind());
    assertEquals(OmniumProperty.Kind.IDENTIFIER, OmniumProperty.HEARTBEAT_TABLE.getKind());
    assertEquals(OmniumProperty.Kind.BOOLEAN, OmniumProperty.HEARTBEAT_WRITER.getKind());
    assertEquals(OmniumProperty.Kind.SIZE, OmniumProperty.FALLBACK_POOL_SIZE.getKind());
    assertEquals(OmniumProperty.Kind.CHOICE, OmniumProperty.READ_YOUR_WRITES.getKind());
    assertEquals(OmniumProperty.Kind.DURATION, OmniumProperty.LOCK_TIMEOUT.getKind());
  }

  @Test
  void namesAreUniqueEvenIgnoringCaseAndDescribed() {
    Set<String> seen = new HashSet<>();
    for (OmniumProperty p : OmniumProperty.values()) {
      assertTrue(seen.add(p.getName().toLowerCase(Locale.ROOT)), p.getName());
      assertFalse(p.getDescription().isBlank(), p.getName());
      assertFalse(p.getDescription().contains("\n"), p.getName());
    }
  }

  @Test
  void noOmniumKeyIsAlsoAPgjdbcKey() {
    // Otherwise a key would be ambiguous: ours, or passed through?
    for (OmniumProperty p : OmniumProperty.values()) {
      assertNull(PGProperty.forName(p.getName()), p.getName());
    }
  }

  @Test
  void forNameIsExact() {
    assertSame(OmniumProperty.MAX_AGE, OmniumProperty.forName("maxAge"));
    assertSame(OmniumProperty.READ_YOUR_WRITES_TTL, OmniumProperty.forName("readYourWritesTtl"));
    assertNull(OmniumProperty.forName("maxage"));
    assertNull(OmniumProperty.forName("MAX_AGE"));
    assertNull(OmniumProperty.forName("user"));
    assertNull(OmniumProperty.forName(null));
    assertSame(OmniumProperty.MAX_AGE, OmniumProperty.forNameIgnoreCase("MAXAGE"));
    assertNull(OmniumProperty.forNameIgnoreCase("max_age"));
  }

  @Test
  void exactMessageForBadDuration() {
    SQLException e = invalid(OmniumProperty.MAX_AGE, "5x");
    assertEquals("Invalid value for maxAge: \"5x\" (expected a duration such as 250ms, 5s, 2m, "
        + "or plain milliseconds)", e.getMessage());
  }

  @Test
  void durationsAreTrimmedAndTyped() throws SQLException {
    assertEquals(Duration.ofMillis(250),
        OmniumProperty.MAX_AGE.getDuration(props("maxAge", " 250ms ")));
    assertEquals(Duration.ofMinutes(2),
        OmniumProperty.LAG_ALERT_AFTER.getDuration(props("lagAlertAfter", "2m")));
    assertEquals("250ms", OmniumProperty.MAX_AGE.get(props("maxAge", " 250ms ")));
  }

  @Test
  void zeroDurationIsAnErrorExceptForLockTimeout() throws SQLException {
    for (OmniumProperty p : OmniumProperty.values()) {
      if (p.getKind() != OmniumProperty.Kind.DURATION) {
        continue;
      }
      if (p == OmniumProperty.LOCK_TIMEOUT) {
        assertEquals(Duration.ZERO, p.getDuration(props(p.getName(), "0")));
      } else {
        SQLException e = invalid(p, "0");
        assertTrue(e.getMessage().contains("greater than zero"), e.getMessage());
      }
    }
  }

  @Test
  void negativeDurationIsAnError() {
    SQLException e = invalid(OmniumProperty.LOCK_TIMEOUT, "-1s");
    assertTrue(e.getMessage().contains("negative"), e.getMessage());
  }

  @Test
  void serverTimeoutsFitPostgresInt() throws SQLException {
    assertEquals(Duration.ofMillis(Integer.MAX_VALUE), OmniumProperty.STATEMENT_TIMEOUT
        .getDuration(props("statementTimeout", Integer.toString(Integer.MAX_VALUE))));
    SQLException e = invalid(OmniumProperty.STATEMENT_TIMEOUT, "2147483648");
    assertTrue(e.getMessage().contains("at most 2147483647ms"), e.getMessage());
    invalid(OmniumProperty.IDLE_IN_TRANSACTION_TIMEOUT, "1000h");
    invalid(OmniumProperty.LOCK_TIMEOUT, "1000h");
    invalid(OmniumProperty.REPLICA_STATEMENT_TIMEOUT, "1000h");
    // Not a server setting: no such cap.
    assertEquals(Duration.ofHours(1000),
        OmniumProperty.MAX_AGE.getDuration(props("maxAge", "1000h")));
  }

  @Test
  void hikariFloorsAreErrorsNotSilentResets() throws SQLException {
    SQLException e = invalid(OmniumProperty.POOL_TIMEOUT, "100ms");
    assertTrue(e.getMessage().contains("at least 250ms"), e.getMessage());
    invalid(OmniumProperty.REPLICA_ACQUIRE_TIMEOUT, "249");
    assertEquals(Duration.ofMillis(250), OmniumProperty.REPLICA_ACQUIRE_TIMEOUT
        .getDuration(props("replicaAcquireTimeout", "250ms")));
    e = invalid(OmniumProperty.MAX_LIFETIME, "10s");
    assertTrue(e.getMessage().contains("at least 30000ms"), e.getMessage());
    assertEquals(Duration.ofSeconds(30),
        OmniumProperty.MAX_LIFETIME.getDuration(props("maxLifetime", "30s")));
    e = invalid(OmniumProperty.POOL_IDLE_TIMEOUT, "9s");
    assertTrue(e.getMessage().contains("at least 10000ms"), e.getMessage());
    assertEquals(Duration.ofSeconds(10),
        OmniumProperty.POOL_IDLE_TIMEOUT.getDuration(props("poolIdleTimeout", "10s")));
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "-1", "-8", "abc", "1.5", "", "99999999999", "8x"})
  void badSizesNameTheKey(String value) {
    SQLException e = invalid(OmniumProperty.REPLICA_POOL_SIZE, value);
    assertTrue(e.getMessage().contains("\"" + value + "\""), e.getMessage());
  }

  @Test
  void zeroAndNegativeSizesSaySo() {
    SQLException e = invalid(OmniumProperty.FALLBACK_POOL_SIZE, "0");
    assertEquals("Invalid value for fallbackPoolSize: \"0\" (must be at least 1; expected a whole "
        + "number of at least 1)", e.getMessage());
    e = invalid(OmniumProperty.PRIMARY_POOL_SIZE, "-3");
    assertTrue(e.getMessage().contains("must be at least 1"), e.getMessage());
  }

  @Test
  void sizesAreTrimmed() throws SQLException {
    assertEquals(7, OmniumProperty.REPLICA_POOL_SIZE.getSize(props("replicaPoolSize", " 7 ")));
    assertEquals(1, OmniumProperty.FALLBACK_POOL_SIZE.getSize(props("fallbackPoolSize", "1")));
  }

  @Test
  void booleansAreTrueOrFalseOnly() throws SQLException {
    assertTrue(OmniumProperty.HEARTBEAT_WRITER.getBoolean(props("heartbeatWriter", "TRUE")));
    assertTrue(OmniumProperty.HEARTBEAT_WRITER.getBoolean(props("heartbeatWriter", " true")));
    assertFalse(OmniumProperty.HEARTBEAT_WRITER.getBoolean(props("heartbeatWriter", "False")));
    for (String bad : new String[] {"yes", "1", "on", "", "tru"}) {
      SQLException e = invalid(OmniumProperty.HEARTBEAT_WRITER, bad);
      assertTrue(e.getMessage().contains("true or false"), e.getMessage());
    }
  }

  @Test
  void identifiers() throws SQLException {
    assertEquals("ops.replica_heartbeat",
        OmniumProperty.HEARTBEAT_TABLE.get(props("heartbeatTable", "ops.replica_heartbeat")));
    assertEquals("_hb2", OmniumProperty.HEARTBEAT_TABLE.get(props("heartbeatTable", "_hb2")));
    for (String bad : new String[] {"1abc", "a.b.c", "hb; DROP TABLE x", "\"hb\"", "", "a.",
        ".a", "hb-1"}) {
      invalid(OmniumProperty.HEARTBEAT_TABLE, bad);
    }
  }

  @Test
  void choices() throws SQLException {
    assertEquals("thread", OmniumProperty.READ_YOUR_WRITES.get(props("readYourWrites", "THREAD")));
    assertEquals("token", OmniumProperty.READ_YOUR_WRITES.get(props("readYourWrites", "token")));
    SQLException e = invalid(OmniumProperty.READ_YOUR_WRITES, "sometimes");
    assertEquals("Invalid value for readYourWrites: \"sometimes\" (expected one of off, thread, "
        + "token)", e.getMessage());
    assertArrayEquals(new String[] {"off", "thread", "token"},
        OmniumProperty.READ_YOUR_WRITES.getChoices());
    assertArrayEquals(new String[] {"true", "false"}, OmniumProperty.HEARTBEAT_WRITER.getChoices());
    assertNull(OmniumProperty.MAX_AGE.getChoices());
  }

  @Test
  void hosts() throws SQLException {
    assertEquals(List.of(new HostSpec("r1", 5432), new HostSpec("r2", 6432)),
        OmniumProperty.REPLICA.getHosts(props("replica", "r1, r2:6432")));
    invalid(OmniumProperty.REPLICA, "r1,,r2");
    invalid(OmniumProperty.REPLICA, "");
  }

  @Test
  void wrongKindIsAProgrammingError() {
    assertThrows(IllegalStateException.class,
        () -> OmniumProperty.MAX_AGE.getSize(new Properties()));
    assertThrows(IllegalStateException.class,
        () -> OmniumProperty.REPLICA_POOL_SIZE.getDuration(new Properties()));
    assertThrows(IllegalStateException.class,
        () -> OmniumProperty.REPLICA.getBoolean(new Properties()));
  }

  @Test
  void valuesFromPropertiesDefaultsAreSeen() throws SQLException {
    Properties defaults = props("maxAge", "3s");
    assertEquals(Duration.ofSeconds(3),
        OmniumProperty.MAX_AGE.getDuration(new Properties(defaults)));
  }

  @Test
  void secretValuesAreNeverEchoed() {
    assertTrue(OmniumProperty.REPLICA_PASSWORD.isSecret());
    assertFalse(OmniumProperty.REPLICA_USER.isSecret());
    SQLException e = OmniumProperty.invalidValue("replicaPassword", PASSWORD, "whatever");
    assertFalse(e.getMessage().contains(PASSWORD), e.getMessage());
    assertTrue(e.getMessage().contains("replicaPassword"), e.getMessage());
  }
}
