package dev.omnium.conformance;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
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
 * The differential suite under the javaagent: the same scenario programs in two forked JVMs with
 * an unmodified {@code jdbc:postgresql:} URL, one plain (the oracle), one with
 * {@code -javaagent:omnium-agent.jar}; their serialized observations must agree.
 */
class AgentConformanceIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static PgCluster cluster;
  static ClusterServer server;
  static Map<String, Observation> plain;
  static Map<String, Observation> agent;
  static final List<Comparison.Result> RESULTS = new ArrayList<>();

  @BeforeAll
  static void up() throws Exception {
    cluster = SANDBOX.cluster();
    server = new ClusterServer(cluster);
    String base = "jdbc:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database();
    plain = Fork.run("plain", Fork.command(null, base + "?ApplicationName=conf-plain",
        cluster.user(), "conf-plain"), server);
    agent = Fork.run("agent", Fork.command("replica=" + cluster.replica(0).hostPort()
        + "&applicationName=conf-agent&" + Sides.OMNIUM_KEYS,
        base + "?ApplicationName=conf-agent", cluster.user(), "conf-agent"), server);
  }

  @AfterAll
  static void down() throws Exception {
    int agree = 0;
    int known = 0;
    for (Comparison.Result r : RESULTS) {
      agree += r.agrees() ? 1 : 0;
      known += r.known().isEmpty() ? 0 : 1;
    }
    System.out.println("[conformance] PostgreSQL " + (cluster == null ? "?" : cluster.version())
        + " mode agent: " + RESULTS.size() + " scenarios, " + agree + " agree with pgjdbc (" + known
        + " with known differences), " + (RESULTS.size() - agree) + " differ");
    if (server != null) {
      server.close();
    }
  }

  @TestFactory
  Stream<DynamicTest> scenarios() {
    List<DynamicTest> tests = new ArrayList<>();
    for (Scenario s : Scenarios.all()) {
      tests.add(DynamicTest.dynamicTest("agent " + s.id(), () -> {
        Observation b = plain.get(s.id());
        Observation c = agent.get(s.id());
        assertNotNull(b, s.id() + ": no observation from the plain JVM");
        assertNotNull(c, s.id() + ": no observation from the agent JVM");
        String escaped = Comparison.escaped(b);
        assertNull(escaped, () -> s.id() + " is not a valid program on pgjdbc: " + escaped);
        Comparison.Result r = Comparison.compare("agent", s.id(), b, c);
        synchronized (RESULTS) {
          RESULTS.add(r);
        }
        Mismatches.record(r);
        r.known().forEach(k -> System.out.println("[conformance] agent " + s.id() + ": " + k));
        assertTrue(r.agrees(), () -> "agent " + s.id() + " differs from pgjdbc:\n  "
            + String.join("\n  ", r.mismatches()) + "\n--- pgjdbc saw:\n  "
            + String.join("\n  ", b.serialize()) + "\n--- agent saw:\n  "
            + String.join("\n  ", c.serialize()));
      }));
    }
    return tests.stream();
  }
}
