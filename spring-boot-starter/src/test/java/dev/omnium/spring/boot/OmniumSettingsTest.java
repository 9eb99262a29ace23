package dev.omnium.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/** {@code omnium.*} in every relaxed spelling becomes the driver's keys. */
class OmniumSettingsTest {
  static StandardEnvironment env(Map<String, Object> props, Map<String, Object> envVars) {
    StandardEnvironment env = new StandardEnvironment();
    env.getPropertySources().addFirst(new MapPropertySource("test", props));
    env.getPropertySources().addFirst(new SystemEnvironmentPropertySource("test-systemEnvironment",
        envVars));
    return env;
  }

  @Test
  void kebabCamelAndEnvironmentSpellingsBindToTheDriverKeys() {
    Properties p = OmniumSettings.from(env(Map.of(
        "omnium.max-age", "2s",
        "omnium.heartbeatWriter", "true",
        "omnium.read-your-writes-ttl", "10s",
        "omnium.pg.version", "18"),
        Map.of("OMNIUM_APPLICATIONNAME", "orders", "OMNIUM_FALLBACK_POOL_SIZE", "3")));
    assertEquals("2s", p.getProperty("maxAge"));
    assertEquals("true", p.getProperty("heartbeatWriter"));
    assertEquals("10s", p.getProperty("readYourWritesTtl"));
    assertEquals("orders", p.getProperty("applicationName"));
    assertEquals("3", p.getProperty("fallbackPoolSize"));
    assertNull(p.getProperty("pg.version"), "other tools' omnium.pg.* is not a driver key");
    assertEquals(5, p.size(), p.toString());
  }

  @Test
  void aTypoIsIgnoredNotPassedToTheDriver() {
    Properties p = OmniumSettings.from(env(Map.of("omnium.max-agee", "2s"), Map.of()));
    assertEquals(0, p.size(), p.toString());
  }

  @Test
  void kebabNamesFollowTheKeyTable() {
    assertEquals("max-age", OmniumKeys.kebab("maxAge"));
    assertEquals("lag-alert-threshold", OmniumKeys.kebab("lagAlertThreshold"));
    assertEquals("replica", OmniumKeys.kebab("replica"));
    assertEquals("replicaPassword", OmniumKeys.keyFor("REPLICA_PASSWORD"));
    assertNull(OmniumKeys.keyFor("user"), "pgjdbc's keys are not omnium keys");
  }

  @Test
  void routerNameComesFromTheUrlFirst() {
    Properties props = new Properties();
    props.setProperty("applicationName", "fromProps");
    assertEquals("fromUrl", OmniumDataSources.applicationName(
        "jdbc:omnium:postgresql://p/db?replica=r&applicationName=fromUrl", props));
    assertEquals("fromProps",
        OmniumDataSources.applicationName("jdbc:omnium:postgresql://p/db", props));
    assertEquals("omnium", OmniumDataSources.applicationName("jdbc:omnium:postgresql://p/db",
        new Properties()));
    assertEquals("a b", OmniumDataSources.applicationName(
        "jdbc:omnium:postgresql://p/db?ApplicationName=a%20b", new Properties()));
  }
}
