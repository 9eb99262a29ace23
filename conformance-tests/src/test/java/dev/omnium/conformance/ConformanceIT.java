package dev.omnium.conformance;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The differential suite in-process: every scenario on pgjdbc under an application HikariCP pool
 * (the oracle), then through omnium in driver mode under the same pool, and through
 * OmniumDataSource; each omnium run must agree with pgjdbc's. One cluster for all scenarios.
 */
class ConformanceIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static PgCluster cluster;
  static ClusterServer server;
  static OmniumDataSource dataSource;
  /** pgjdbc's observations per baseline ("hikari" or "plain") and scenario. */
  static final Map<String, Observation> BASE = new ConcurrentHashMap<>();
  static final List<Comparison.Result> RESULTS = new ArrayList<>();

  @BeforeAll
  static void up() throws Exception {
    cluster = SANDBOX.cluster();
    server = new ClusterServer(cluster);
    dataSource = Sides.omniumDataSource(cluster, "conf-ds");
    boolean driverReads;
    try (HikariDataSource driver = Sides.omniumDriver(cluster, "conf-drv")) {
      driverReads = Sides.awaitReplicaReads(driver::getConnection, Duration.ofSeconds(20));
    }
    System.out.println("[conformance] PostgreSQL " + cluster.version() + ": reads on the replica:"
        + " driver " + driverReads + ", datasource "
        + Sides.awaitReplicaReads(dataSource::getConnection, Duration.ofSeconds(20)));
  }

  @AfterAll
  static void down() throws Exception {
    Map<String, int[]> perMode = new TreeMap<>();
    for (Comparison.Result r : RESULTS) {
      int[] n = perMode.computeIfAbsent(r.mode(), k -> new int[3]);
      n[0]++;
      n[1] += r.agrees() ? 1 : 0;
      n[2] += r.known().isEmpty() ? 0 : 1;
    }
    perMode.forEach((mode, n) -> System.out.println("[conformance] PostgreSQL "
        + (cluster == null ? "?" : cluster.version()) + " mode " + mode + ": " + n[0]
        + " scenarios, " + n[1] + " agree with pgjdbc (" + n[2] + " with known differences), "
        + (n[0] - n[1]) + " differ"));
    for (AutoCloseable c : new AutoCloseable[] {dataSource, server}) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception e) {
          System.err.println("[conformance] close: " + e);
        }
      }
    }
    // the sandbox then shuts the driver down and stops the heartbeat and the servers
  }

  /**
   * pgjdbc's run of a scenario, once per baseline: under a new application HikariCP pool (the
   * oracle of driver mode) or plain DriverManager connections (of OmniumDataSource, itself a pool).
   */
  static Observation base(String baseline, Scenario s) throws Exception {
    Observation o = BASE.get(baseline + " " + s.id());
    if (o == null) {
      if (baseline.equals("hikari")) {
        try (HikariDataSource pool = Sides.pgjdbc(cluster, "conf-pg")) {
          o = s.runOn(new Sides.Named("conf-pg", pool::getConnection), server);
        }
      } else {
        o = s.runOn(Sides.plain(cluster, "conf-plain"), server);
      }
      String escaped = Comparison.escaped(o);
      assertNull(escaped, () -> s.id() + " is not a valid program on pgjdbc: " + escaped);
      BASE.put(baseline + " " + s.id(), o);
    }
    return o;
  }

  static void check(String mode, String baseline, Scenario s, Source candidate) throws Exception {
    Observation b = base(baseline, s);
    Observation c = s.runOn(candidate, server);
    if (Boolean.getBoolean("conformance.dump")) {
      System.out.println("[conformance] " + mode + " " + s.id() + "\n  pgjdbc:\n    "
          + String.join("\n    ", b.serialize()) + "\n  " + mode + ":\n    "
          + String.join("\n    ", c.serialize()));
    }
    Comparison.Result r = Comparison.compare(mode, s.id(), b, c);
    synchronized (RESULTS) {
      RESULTS.add(r);
    }
    Mismatches.record(r);
    r.known().forEach(k -> System.out.println("[conformance] " + mode + " " + s.id() + ": " + k));
    assertTrue(r.agrees(), () -> mode + " " + s.id() + " differs from pgjdbc:\n  "
        + String.join("\n  ", r.mismatches()) + "\n--- pgjdbc saw:\n  "
        + String.join("\n  ", b.serialize()) + "\n--- " + mode + " saw:\n  "
        + String.join("\n  ", c.serialize()));
  }

  /** Whether {@code -Dconformance.only} (comma-separated id prefixes) selects the scenario. */
  static boolean selected(String id) {
    for (String prefix : System.getProperty("conformance.only", "").split(",", -1)) {
      if (id.startsWith(prefix.trim())) return true;
    }
    return false;
  }

  @TestFactory
  Stream<DynamicTest> scenarios() {
    List<DynamicTest> tests = new ArrayList<>();
    for (Scenario s : Scenarios.all()) {
      // -Dconformance.only=<id prefix>[,<id prefix>...] runs a part of the catalog while working
      if (!selected(s.id())) continue;
      // A new application pool per scenario, as per pgjdbc run: what one scenario leaves in
      // pooled sessions cannot leak into the next (omnium's router and its pools stay shared).
      tests.add(DynamicTest.dynamicTest("driver " + s.id(), () -> {
        try (HikariDataSource driver = Sides.omniumDriver(cluster, "conf-drv")) {
          check("driver", "hikari", s, new Sides.Named("conf-drv", driver::getConnection));
        }
      }));
      tests.add(DynamicTest.dynamicTest("datasource " + s.id(), () -> check("datasource", "plain",
          s, new Sides.Named("conf-ds", dataSource::getConnection))));
    }
    return tests.stream();
  }
}
