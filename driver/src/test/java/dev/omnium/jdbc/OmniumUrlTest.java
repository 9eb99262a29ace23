package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OmniumUrlTest {

  private static final String PASSWORD = "s3cr3t-pw";

  private static SQLException fails(String url) {
    SQLException e = assertThrows(SQLException.class, () -> OmniumUrl.parse(url));
    assertEquals("08001", e.getSQLState());
    assertFalse(e.getMessage().contains(PASSWORD), e.getMessage());
    return e;
  }

  @Test
  void accepts() {
    assertTrue(OmniumUrl.accepts("jdbc:omnium:postgresql://h/db"));
    assertTrue(OmniumUrl.accepts("jdbc:omnium:postgresql:db"));
    assertFalse(OmniumUrl.accepts("jdbc:postgresql://h/db"));
    assertFalse(OmniumUrl.accepts("jdbc:omnium:mysql://h/db"));
    assertFalse(OmniumUrl.accepts("JDBC:OMNIUM:POSTGRESQL://h/db"));
    assertFalse(OmniumUrl.accepts(null));
  }

  @Test
  void foreignUrlIsAnError() {
    SQLException e = fails("jdbc:postgresql://h/db?password=" + PASSWORD);
    assertTrue(e.getMessage().contains(OmniumUrl.FORM), e.getMessage());
  }

  @Test
  void theContractForm() throws SQLException {
    OmniumUrl u = OmniumUrl.parse(
        "jdbc:omnium:postgresql://primary/db?replica=host&maxAge=5s&applicationName=api");
    assertEquals(List.of(new HostSpec("primary", 5432)), u.hosts());
    assertEquals("db", u.database());
    assertEquals(List.of("replica", "maxAge", "applicationName"),
        List.copyOf(u.parameters().keySet()));
    assertEquals("host", u.parameters().get("replica"));
    assertEquals("5s", u.parameters().get("maxAge"));
    assertEquals("api", u.parameters().get("applicationName"));
  }

  @Test
  void multiHostPrimaryWithPortsAndIpv6() throws SQLException {
    OmniumUrl u = OmniumUrl.parse(
        "jdbc:omnium:postgresql://p1:5433,p2,[::1]:5434,[fe80::2],10.0.0.7:6543/app");
    assertEquals(List.of(new HostSpec("p1", 5433), new HostSpec("p2", 5432),
        new HostSpec("::1", 5434), new HostSpec("fe80::2", 5432), new HostSpec("10.0.0.7", 6543)),
        u.hosts());
    assertEquals("app", u.database());
    assertEquals(Map.of(), u.parameters());
    assertEquals("[::1]:5434", u.hosts().get(2).toString());
    assertEquals("p2:5432", u.hosts().get(1).toString());
  }

  @Test
  void shortFormsMeanLocalhost() throws SQLException {
    OmniumUrl u = OmniumUrl.parse("jdbc:omnium:postgresql:db?user=app");
    assertEquals(List.of(new HostSpec("localhost", 5432)), u.hosts());
    assertEquals("db", u.database());
    assertEquals("app", u.parameters().get("user"));

    u = OmniumUrl.parse("jdbc:omnium:postgresql:///db");
    assertEquals(List.of(new HostSpec("localhost", 5432)), u.hosts());
    assertEquals("db", u.database());

    u = OmniumUrl.parse("jdbc:omnium:postgresql://:5433/db");
    assertEquals(List.of(new HostSpec("localhost", 5433)), u.hosts());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "jdbc:omnium:postgresql://host",
      "jdbc:omnium:postgresql://host/",
      "jdbc:omnium:postgresql://host:5432",
      "jdbc:omnium:postgresql://host/?user=u&password=s3cr3t-pw",
      "jdbc:omnium:postgresql://host?password=s3cr3t-pw",
      "jdbc:omnium:postgresql:/",
      "jdbc:omnium:postgresql:",
      "jdbc:omnium:postgresql:?password=s3cr3t-pw",
      "jdbc:omnium:postgresql:///",
  })
  void missingDatabase(String url) {
    SQLException e = fails(url);
    assertTrue(e.getMessage().startsWith("The database is missing in "), e.getMessage());
    assertTrue(e.getMessage().contains(OmniumUrl.FORM), e.getMessage());
  }

  @Test
  void missingDatabaseMessageShowsTheMaskedUrl() {
    SQLException e = fails("jdbc:omnium:postgresql://host/?password=" + PASSWORD + "&user=app");
    assertEquals("The database is missing in jdbc:omnium:postgresql://host/?password=***&user=app"
        + " (expected " + OmniumUrl.FORM + ")", e.getMessage());
  }

  @Test
  void percentDecodingLikePgjdbc() throws SQLException {
    OmniumUrl u = OmniumUrl.parse("jdbc:omnium:postgresql://h/my%20db%C3%A9"
        + "?options=-c%20search_path%3Dapp%2Cpublic&applicationName=a+b&password=p%26w%3D%25");
    assertEquals("my dbé", u.database());
    assertEquals("-c search_path=app,public", u.parameters().get("options"));
    assertEquals("a b", u.parameters().get("applicationName")); // '+' is a space, as in pgjdbc
    assertEquals("p&w=%", u.parameters().get("password"));
  }

  @Test
  void repeatedKeyLastWinsAndKeepsItsPlace() throws SQLException {
    OmniumUrl u = OmniumUrl.parse("jdbc:omnium:postgresql://h/db?maxAge=1s&user=u&maxAge=2s");
    assertEquals("2s", u.parameters().get("maxAge"));
    assertEquals(List.of("maxAge", "user"), List.copyOf(u.parameters().keySet()));
  }

  @Test
  void emptyTokensAreIgnoredAndBareKeysAreEmpty() throws SQLException {
    OmniumUrl u = OmniumUrl.parse("jdbc:omnium:postgresql://h/db?&ssl&&user=u&");
    assertEquals("", u.parameters().get("ssl"));
    assertEquals("u", u.parameters().get("user"));
    assertEquals(2, u.parameters().size());
    assertThrows(UnsupportedOperationException.class, () -> u.parameters().put("x", "y"));
  }

  @Test
  void emptyParameterNameIsAnError() {
    SQLException e = fails("jdbc:omnium:postgresql://h/db?=x&password=" + PASSWORD);
    assertTrue(e.getMessage().contains("Empty parameter name"), e.getMessage());
  }

  @Test
  void badPercentEncodingNeverEchoesTheValue() {
    SQLException e = fails("jdbc:omnium:postgresql://h/db?password=" + PASSWORD + "%zz");
    assertTrue(e.getMessage().contains("password"), e.getMessage());
    e = fails("jdbc:omnium:postgresql://h/db%zz?password=" + PASSWORD);
    assertTrue(e.getMessage().contains("database name"), e.getMessage());
  }

  @Test
  void slashInDatabaseMustBeEncoded() throws SQLException {
    fails("jdbc:omnium:postgresql://h/a/b");
    assertEquals("a/b", OmniumUrl.parse("jdbc:omnium:postgresql://h/a%2Fb").database());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "jdbc:omnium:postgresql://h:0/db",
      "jdbc:omnium:postgresql://h:65536/db",
      "jdbc:omnium:postgresql://h:-1/db",
      "jdbc:omnium:postgresql://h:abc/db",
      "jdbc:omnium:postgresql://h:/db",
      "jdbc:omnium:postgresql://h1,,h2/db",
      "jdbc:omnium:postgresql://h1,/db",
      "jdbc:omnium:postgresql://::1/db",
      "jdbc:omnium:postgresql://[::1/db",
      "jdbc:omnium:postgresql://[::1]x/db",
      "jdbc:omnium:postgresql://[host]/db",
      "jdbc:omnium:postgresql://h1,h1:5432/db",
      "jdbc:omnium:postgresql://h 1/db",
  })
  void badHostsAreErrorsShowingTheForm(String url) {
    SQLException e = fails(url);
    assertTrue(e.getMessage().contains("Invalid value for host"), e.getMessage());
    assertTrue(e.getMessage().contains(OmniumUrl.FORM), e.getMessage());
  }

  @Test
  void portBounds() throws SQLException {
    assertEquals(65535,
        OmniumUrl.parse("jdbc:omnium:postgresql://h:65535/db").hosts().get(0).port());
    assertEquals(1, OmniumUrl.parse("jdbc:omnium:postgresql://h:1/db").hosts().get(0).port());
  }

  @Test
  void userInfoIsRefusedWithoutEchoingThePassword() {
    SQLException e = fails("jdbc:omnium:postgresql://app:" + PASSWORD + "@h/db");
    assertTrue(e.getMessage().contains("use the user and password parameters"), e.getMessage());
    assertTrue(e.getMessage().contains("app:***@h/db"), e.getMessage());
  }

  @Test
  void malformedShortForm() {
    fails("jdbc:omnium:postgresql:/db");
  }

  @Test
  void toStringMasksSecrets() throws SQLException {
    OmniumUrl u = OmniumUrl.parse("jdbc:omnium:postgresql://[::1]:5433,h/db?user=app&password="
        + PASSWORD + "&replicaPassword=" + PASSWORD);
    assertEquals("jdbc:omnium:postgresql://[::1]:5433,h:5432/db?user=app&password=***"
        + "&replicaPassword=***", u.toString());
  }

  @Test
  void hostSpecParsing() throws SQLException {
    assertEquals(new HostSpec("db.example.com", 5432), HostSpec.parse("replica",
        " db.example.com "));
    assertEquals(new HostSpec("::1", 5433), HostSpec.parse("replica", "[::1]:5433"));
    assertEquals("[::1]:5433", HostSpec.parse("replica", "[::1]:5433").toString());
    assertEquals(List.of(new HostSpec("r1", 5432), new HostSpec("r2", 5432),
        new HostSpec("2001:db8::1", 6000)), HostSpec.parseList("replica",
            "r1,r2 , [2001:db8::1]:6000"));
    SQLException e = assertThrows(SQLException.class, () -> HostSpec.parseList("replica",
        "r1,,r2"));
    assertEquals("Invalid value for replica: \"r1,,r2\" (empty entry in host list; expected "
        + "host[:port][,host[:port]...], IPv6 in brackets such as [::1]:5432)", e.getMessage());
    assertEquals("08001", e.getSQLState());
    e = assertThrows(SQLException.class, () -> HostSpec.parse("replica", "r1:99999"));
    assertTrue(e.getMessage().contains("between 1 and 65535"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new HostSpec("h", 0));
    assertThrows(IllegalArgumentException.class, () -> new HostSpec("", 5432));
  }
}
