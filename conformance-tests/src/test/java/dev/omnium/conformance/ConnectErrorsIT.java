package dev.omnium.conformance;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.io.File;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The connect-error programs ({@link ConnectErrorScenarios}, issue 30) on a cluster that requires
 * scram-sha-256 passwords and TLS: each login pgjdbc refuses fails through omnium at the same call
 * with the same exception class, SQLState and message, in driver mode (plain {@code DriverManager}
 * and an application HikariCP pool's start), DataSource mode and under the javaagent (forked
 * JVMs, with and without it); the login that succeeds runs its query in every mode.
 */
class ConnectErrorsIT {
  static final String USER = "conf_user";
  static final String PASSWORD = "conf-pw-1";

  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).requirePasswords().tls()
      .role(USER, PASSWORD).build();
  static PgCluster cluster;
  static ClusterServer server;
  static List<ConnectErrorScenarios.Case> cases;
  static Map<String, Observation> agentPlain;
  static Map<String, Observation> agent;
  static final List<Comparison.Result> RESULTS = new ArrayList<>();

  @BeforeAll
  static void up() throws Exception {
    cluster = SANDBOX.cluster();
    server = new ClusterServer(cluster);
    cases = ConnectErrorScenarios.cases(cluster.database(), USER, PASSWORD,
        cluster.tls().rootCert().toString(), cluster.tls().wrongRootCert().toString());
    agentPlain = Fork.run("connect-plain", command(null, "conf-ce-plain"), server);
    agent = Fork.run("connect-agent", command("replica=" + cluster.replica(0).hostPort()
        + "&" + Sides.OMNIUM_KEYS, "conf-ce-agent"), server);
  }

  @AfterAll
  static void down() throws Exception {
    int agree = 0;
    for (Comparison.Result r : RESULTS) agree += r.agrees() ? 1 : 0;
    System.out.println("[conformance] PostgreSQL " + (cluster == null ? "?" : cluster.version())
        + " connect errors: " + RESULTS.size() + " comparisons, " + agree + " agree with pgjdbc, "
        + (RESULTS.size() - agree) + " differ");
    if (server != null) server.close();
  }

  static List<String> command(String agentArgs, String app) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Fork.JAVA);
    cmd.add("-XX:TieredStopAtLevel=1");
    if (agentArgs != null) {
      cmd.add("-javaagent:" + new File(Fork.property("agent.jar")).getAbsolutePath() + "="
          + agentArgs);
    }
    cmd.add("-cp");
    cmd.add(Fork.property("fork.classpath"));
    cmd.add(ConnectErrorsMain.class.getName());
    cmd.add(pgBase());
    cmd.add(app);
    for (ConnectErrorScenarios.Case c : cases) cmd.add(c.encode());
    return cmd;
  }

  static String pgBase() {
    return "jdbc:postgresql://" + cluster.primary().hostPort() + "/";
  }

  static String omniumUrl(ConnectErrorScenarios.Case c, String app) {
    return c.url("jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/", app)
        + "&replica=" + cluster.replica(0).hostPort() + "&" + Sides.OMNIUM_KEYS;
  }

  /** HikariCP's start and first connection: the application pool as a service configures it. */
  static Connection hikari(String url, List<AutoCloseable> toClose) throws SQLException {
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(url);
    hc.setMaximumPoolSize(2);
    hc.setConnectionTimeout(10_000);
    HikariDataSource pool = new HikariDataSource(hc);
    toClose.add(pool);
    return pool.getConnection();
  }

  static void compare(String mode, Scenario s, Observation base, Observation candidate) {
    String escaped = Comparison.escaped(base);
    assertNull(escaped, () -> s.id() + " is not a valid program on pgjdbc: " + escaped);
    Comparison.Result r = Comparison.compare(mode, s.id(), base, candidate);
    synchronized (RESULTS) {
      RESULTS.add(r);
    }
    Mismatches.record(r);
    assertTrue(r.agrees(), () -> mode + " " + s.id() + " differs from pgjdbc:\n  "
        + String.join("\n  ", r.mismatches()) + "\n--- pgjdbc saw:\n  "
        + String.join("\n  ", base.serialize()) + "\n--- " + mode + " saw:\n  "
        + String.join("\n  ", candidate.serialize()));
  }

  @TestFactory
  Stream<DynamicTest> connectErrors() {
    List<DynamicTest> tests = new ArrayList<>();
    for (ConnectErrorScenarios.Case c : cases) {
      Scenario s = ConnectErrorScenarios.scenario(c);
      tests.add(DynamicTest.dynamicTest("driver " + s.id(), () -> {
        Observation pg = s.runOn(new Sides.Named("conf-ce-pg",
            () -> DriverManager.getConnection(c.url(pgBase(), "conf-ce-pg"))), server);
        Observation om = s.runOn(new Sides.Named("conf-ce-drv",
            () -> DriverManager.getConnection(omniumUrl(c, "conf-ce-drv"))), server);
        compare("driver", s, pg, om);
        OmniumDriver.shutdown();
      }));
      tests.add(DynamicTest.dynamicTest("driver-hikari " + s.id(), () -> {
        List<AutoCloseable> pools = new ArrayList<>();
        try {
          Observation pg = s.runOn(new Sides.Named("conf-ce-hpg",
              () -> hikari(c.url(pgBase(), "conf-ce-hpg"), pools)), server);
          Observation om = s.runOn(new Sides.Named("conf-ce-hom",
              () -> hikari(omniumUrl(c, "conf-ce-hom"), pools)), server);
          compare("driver-hikari", s, pg, om);
        } finally {
          for (AutoCloseable p : pools) p.close();
          OmniumDriver.shutdown();
        }
      }));
      tests.add(DynamicTest.dynamicTest("datasource " + s.id(), () -> {
        Observation pg = s.runOn(new Sides.Named("conf-ce-pgds",
            () -> DriverManager.getConnection(c.url(pgBase(), "conf-ce-pgds"))), server);
        try (OmniumDataSource ds = new OmniumDataSource(omniumUrl(c, "conf-ce-ds"))) {
          Observation om = s.runOn(new Sides.Named("conf-ce-ds", ds::getConnection), server);
          compare("datasource", s, pg, om);
        }
      }));
      tests.add(DynamicTest.dynamicTest("agent " + s.id(), () -> {
        Observation pg = agentPlain.get(s.id());
        Observation om = agent.get(s.id());
        assertNotNull(pg, s.id() + ": no observation from the plain JVM");
        assertNotNull(om, s.id() + ": no observation from the agent JVM");
        compare("agent", s, pg, om);
      }));
    }
    return tests.stream();
  }
}
