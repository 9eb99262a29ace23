package dev.omnium.agenttests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Unmodified applications in forked JVMs, with {@code -javaagent:omnium-agent.jar=...} and without
 * (control): where each unit of work ran, as the servers report it.
 */
class AgentRoutingIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).sql(Apps.SCHEMA).build();
  static final Apps APPS = new Apps(SANDBOX);

  /** One clean INFO line that says the agent is on, nothing at WARN or ERROR. */
  static void assertQuietlyActive(AppProcess app) {
    assertEquals(List.of(), Apps.problems(app), app.transcript());
    assertTrue(app.agentLines().stream().anyMatch(l -> l.startsWith("[omnium-agent] INFO active:")),
        "no 'active' line\n" + app.transcript());
  }

  // ---------------------------------------------------------------- 1. plain JDBC (DriverManager)

  @Test
  void plainJdbcRoutesReadOnlyWorkToTheReplica() throws Exception {
    AppProcess app = Apps.run("plain+agent", APPS.plain(APPS.agentArgs("plain"), "plain-own", 15), null);
    APPS.assertRouted(app, "plain", 3);
    assertQuietlyActive(app);
    // Nothing else on stderr: no JVM warning (nothing is appended to the bootstrap path, so class
    // data sharing stays on) and no Byte Buddy/Unsafe warning.
    assertEquals(app.agentLines(), app.stderr(), app.transcript());
    // The application holds the omnium connection (relocated into the agent), which is pgjdbc's
    // PGConnection itself: unwrap answers it, as JDBC says of an interface the receiver implements.
    assertEquals("CLASSES dev.omnium.agent.bundle.jdbc.OmniumConnection"
        + " dev.omnium.agent.bundle.jdbc.OmniumConnection true",
        app.awaitLine("CLASSES ", Duration.ofSeconds(1)));
    // PGXADataSource casts to pgjdbc's own class: its connections stay plain pgjdbc, and work.
    assertEquals("WHERE xa false " + SANDBOX.primary().port() + " plain-own", app.awaitLine("WHERE xa ", Duration.ofSeconds(1)));
  }

  @Test
  void argumentsComeFromTheEnvironmentWhenThereIsNoAgentArgument() throws Exception {
    AppProcess app = Apps.run("plain+agent(env)", APPS.plain("", "env-own", 15),
        Map.of("OMNIUM_AGENT_ARGS", APPS.agentArgs("fromenv")));
    APPS.assertRouted(app, "fromenv", 3);
    assertQuietlyActive(app);
  }

  @Test
  void connectionsThatDoNotMatchAreUntouched() throws Exception {
    AppProcess app = Apps.run("plain+agent(match)", APPS.plain(APPS.agentArgs("matched") + "&match=other-db", "unmatched", 4), null);
    APPS.assertAllOnPrimary(app, "unmatched");
    assertQuietlyActive(app);
  }

  // ---------------------------------------------------------------- 2. an application-owned HikariCP pool

  @Test
  void hikariWithJdbcUrlRoutesReadOnlyTransactions() throws Exception {
    AppProcess app = Apps.run("hikari+agent", APPS.hikari(APPS.agentArgs("hik"), "jdbcUrl", "hik-own", 4, 8), null);
    APPS.assertRouted(app, "hik", 4);
    assertQuietlyActive(app);
  }

  @Test
  void hikariWithPgSimpleDataSourceRoutesReadOnlyTransactions() throws Exception {
    AppProcess app = Apps.run("hikari(ds)+agent", APPS.hikari(APPS.agentArgs("hikds"), "dataSource", "hikds-own", 3, 8), null);
    APPS.assertRouted(app, "hikds", 3);
    assertQuietlyActive(app);
  }

  // ---------------------------------------------------------------- 3. Spring Boot fat jar

  @Test
  void springBootFatJarRoutesReadOnlyTransactions() throws Exception {
    AppProcess app = Apps.run("spring+agent", APPS.spring(APPS.agentArgs("boot"), "boot-own", 12), null);
    APPS.assertRouted(app, "boot", 3);
    assertQuietlyActive(app);
  }

  // ---------------------------------------------------------------- 4. controls: the same apps without the agent

  @Test
  void withoutTheAgentEverythingRunsOnThePrimary() throws Exception {
    AppProcess plain = Apps.run("plain", APPS.plain(null, "plain-control", 3), null);
    APPS.assertAllOnPrimary(plain, "plain-control");
    assertEquals("CLASSES org.postgresql.jdbc.PgConnection org.postgresql.jdbc.PgConnection true",
        plain.awaitLine("CLASSES ", Duration.ofSeconds(1)));
    APPS.assertAllOnPrimary(Apps.run("hikari", APPS.hikari(null, "jdbcUrl", "hik-control", 2, 2), null), "hik-control");
    APPS.assertAllOnPrimary(Apps.run("hikari(ds)", APPS.hikari(null, "dataSource", "hikds-control", 2, 2), null), "hikds-control");
    APPS.assertAllOnPrimary(Apps.run("spring", APPS.spring(null, "boot-control", 2), null), "boot-control");
  }
}
