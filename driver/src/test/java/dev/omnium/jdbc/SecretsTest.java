package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class SecretsTest {

  private static final String PASSWORD = "s3cr3t-pw";

  @Test
  void secretKeys() {
    for (String k : new String[] {"password", "Password", "PASSWORD", "replicaPassword",
        "sslpassword", "sslPasswordCallback", "keystorePassphrase", "clientSecret"}) {
      assertTrue(Secrets.isSecretKey(k), k);
    }
    for (String k : new String[] {"user", "replicaUser", "sslkey", "ssl", "options", "pass",
        null}) {
      assertFalse(Secrets.isSecretKey(k), String.valueOf(k));
    }
  }

  @Test
  void masksPasswordQueryValues() {
    assertEquals("jdbc:omnium:postgresql://h/db?user=app&password=***&replica=r1"
            + "&replicaPassword=***&sslpassword=***",
        Secrets.maskUrl("jdbc:omnium:postgresql://h/db?user=app&password=" + PASSWORD
            + "&replica=r1&replicaPassword=" + PASSWORD + "&sslpassword=" + PASSWORD));
  }

  @Test
  void masksWhateverTheCaseOrEncodingOfTheKey() {
    String masked = Secrets.maskUrl("jdbc:omnium:postgresql://h/db?PassWord=" + PASSWORD
        + "&pass%77ord=" + PASSWORD + "&REPLICAPASSWORD=" + PASSWORD);
    assertFalse(masked.contains(PASSWORD), masked);
    assertEquals("jdbc:omnium:postgresql://h/db?PassWord=***&pass%77ord=***&REPLICAPASSWORD=***",
        masked);
  }

  @Test
  void masksValuesContainingSeparators() {
    String masked = Secrets.maskUrl("jdbc:omnium:postgresql://h/db?password=a=b" + PASSWORD
        + "&user=u");
    assertEquals("jdbc:omnium:postgresql://h/db?password=***&user=u", masked);
  }

  @Test
  void masksUserInfo() {
    assertEquals("jdbc:omnium:postgresql://app:***@h:5432/db?ssl=true",
        Secrets.maskUrl("jdbc:omnium:postgresql://app:" + PASSWORD + "@h:5432/db?ssl=true"));
    // A '/' inside the password must not end the user info early.
    assertEquals("jdbc:omnium:postgresql://app:***@h/db",
        Secrets.maskUrl("jdbc:omnium:postgresql://app:pa/" + PASSWORD + "@h/db"));
    // User info without a password has nothing to hide.
    assertEquals("jdbc:omnium:postgresql://app@h/db",
        Secrets.maskUrl("jdbc:omnium:postgresql://app@h/db"));
  }

  @Test
  void leavesOtherUrlsAlone() {
    String url = "jdbc:omnium:postgresql://h1:5433,[::1]:5434/db?user=app&replica=r1,r2&maxAge=5s";
    assertEquals(url, Secrets.maskUrl(url));
    assertEquals("jdbc:omnium:postgresql:db", Secrets.maskUrl("jdbc:omnium:postgresql:db"));
    assertEquals("jdbc:omnium:postgresql://h/db?ssl",
        Secrets.maskUrl("jdbc:omnium:postgresql://h/db?ssl"));
    assertNull(Secrets.maskUrl(null));
  }

  @Test
  void masksProperties() {
    Properties p = new Properties();
    p.setProperty("user", "app");
    p.setProperty("password", PASSWORD);
    p.setProperty("sslpassword", PASSWORD);
    p.setProperty("sslkey", "/etc/key.pk8");
    p.setProperty("replicaPassword", PASSWORD);
    String s = Secrets.maskProperties(p);
    assertEquals("{password=***, replicaPassword=***, sslkey=/etc/key.pk8, sslpassword=***, "
        + "user=app}", s);
    assertEquals("{}", Secrets.maskProperties(null));
  }

  @Test
  void masksPropertiesDefaultsToo() {
    Properties defaults = new Properties();
    defaults.setProperty("password", PASSWORD);
    Properties p = new Properties(defaults);
    p.setProperty("user", "app");
    assertEquals("{password=***, user=app}", Secrets.maskProperties(p));
  }

  @Test
  void masksMapsAndSingleValues() {
    assertEquals("{a=1, password=***}", Secrets.maskMap(Map.of("password", PASSWORD, "a", "1")));
    assertEquals("***", Secrets.mask("replicaPassword", PASSWORD));
    assertEquals("app", Secrets.mask("user", "app"));
    assertNull(Secrets.mask("password", null));
  }
}
