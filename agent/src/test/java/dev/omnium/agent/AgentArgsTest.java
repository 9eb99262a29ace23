package dev.omnium.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AgentArgsTest {

  @Test
  void parsesKeysLikeUrlParameters() throws Exception {
    AgentArgs a = AgentArgs.parse("replica=10.0.0.2:5432,10.0.0.3&maxAge=5s&applicationName=my%20api", "arg");
    assertEquals(Map.of("replica", "10.0.0.2:5432,10.0.0.3", "maxAge", "5s", "applicationName", "my api"), a.keys);
    assertNull(a.match);
    assertEquals("replica=10.0.0.2%3A5432%2C10.0.0.3&maxAge=5s&applicationName=my+api", a.query());
  }

  @Test
  void matchIsTheAgentsOwnKey() throws Exception {
    AgentArgs a = AgentArgs.parse("replica=r:5432&match=orders", "arg");
    assertEquals(Map.of("replica", "r:5432"), a.keys);
    assertTrue(a.matches("jdbc:postgresql://db/orders?ssl=true"));
    assertFalse(a.matches("jdbc:postgresql://db/billing"));
    assertFalse(a.matches("jdbc:mysql://db/orders"));
    assertTrue(AgentArgs.parse("replica=r", "arg").matches("jdbc:postgresql:db"));
  }

  @Test
  void toleratesQuotesLeadingQuestionMarkAndEmptyTokens() throws Exception {
    assertEquals(Map.of("replica", "r", "maxAge", "2s"), AgentArgs.parse("'?replica=r&&maxAge=2s&'", "arg").keys);
  }

  @Test
  void theArgumentWinsOverTheEnvironment() throws Exception {
    Map<String, String> env = Map.of(AgentArgs.ENV, "replica=fromenv");
    assertEquals("fromarg", AgentArgs.resolve("replica=fromarg", env).keys.get("replica"));
    assertEquals("fromenv", AgentArgs.resolve(null, env).keys.get("replica"));
    assertEquals("fromenv", AgentArgs.resolve("  ", env).keys.get("replica"));
    assertEquals(AgentArgs.ENV, AgentArgs.resolve("", env).source);
    assertNull(AgentArgs.resolve(null, Map.of()));
  }

  @Test
  void malformedArgumentsNameTheTokenAndTheForm() {
    AgentArgs.BadArgument e = assertThrows(AgentArgs.BadArgument.class, () -> AgentArgs.parse("replica", "arg"));
    assertTrue(e.getMessage().contains("'replica'") && e.getMessage().contains("key=value"), e.getMessage());
    assertThrows(AgentArgs.BadArgument.class, () -> AgentArgs.parse("=x", "arg"));
    assertThrows(AgentArgs.BadArgument.class, () -> AgentArgs.parse("replica=r&match=", "arg"));
    assertThrows(AgentArgs.BadArgument.class, () -> AgentArgs.parse("maxAge=%zz", "arg"));
  }

  @Test
  void passwordsNeverShow() throws Exception {
    AgentArgs a = AgentArgs.parse("replica=r&replicaPassword=s3cret&password=hunter2", "arg");
    assertFalse(a.describe().contains("s3cret"));
    assertFalse(a.describe().contains("hunter2"));
    AgentArgs.BadArgument e = assertThrows(AgentArgs.BadArgument.class,
        () -> AgentArgs.parse("password=%zzsecret", "arg"));
    assertFalse(e.getMessage().contains("secret"), e.getMessage());
  }
}
