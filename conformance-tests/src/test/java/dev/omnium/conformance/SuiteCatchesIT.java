package dev.omnium.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The suite can fail: a deliberately wrong wrapper (a fourth "mode") must produce mismatches,
 * and pgjdbc compared with itself must produce none (the observations are deterministic).
 */
class SuiteCatchesIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static ClusterServer server;

  @BeforeAll
  static void up() throws Exception {
    server = new ClusterServer(SANDBOX.cluster());
  }

  @AfterAll
  static void down() {
    if (server != null) {
      server.close();
    }
  }

  static Sides.Opener direct(String app) {
    PgCluster cluster = SANDBOX.cluster();
    String url = "jdbc:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?ApplicationName=" + app;
    Properties p = new Properties();
    p.setProperty("user", cluster.user());
    return () -> DriverManager.getConnection(url, p);
  }

  /** Runs {@code s} on pgjdbc, then on {@code other}; the program must be valid on pgjdbc. */
  static Comparison.Result compare(String mode, Scenario s, Source pgjdbc, Source other)
      throws Exception {
    Observation b = s.runOn(pgjdbc, server);
    Observation c = s.runOn(other, server);
    Comparison.Result r = Comparison.compare(mode, s.id(), b, c);
    assertNull(Comparison.escaped(b), s.id() + " must be a valid program on pgjdbc");
    return r;
  }

  /**
   * Compares each scenario {@code which} selects on two sides; returns, by id, those that differ
   * (with {@code strict}, also those that agree only through a listed difference).
   */
  static List<String> differing(String mode, Predicate<Scenario> which, Source a, Source b,
      boolean strict) throws Exception {
    List<String> differ = new ArrayList<>();
    for (Scenario s : Scenarios.all()) {
      if (!which.test(s)) {
        continue;
      }
      Comparison.Result r = compare(mode, s, a, b);
      if (!r.agrees() || strict && !r.known().isEmpty()) {
        differ.add(s.id() + ": " + r.mismatches() + (strict ? r.known() : ""));
      }
    }
    return differ;
  }

  @Test
  void aWrapperThatSilentlyRebindsALostSessionIsCaught() throws Exception {
    Sides.Opener plain = direct("conf-plain");
    Sides.Opener broken = direct("conf-broken");
    Predicate<Scenario> lostSession = s -> s.group().equals("lost-session");
    long scenarios = Scenarios.all().stream().filter(lostSession).count();
    List<String> caught = differing("broken", lostSession, new Sides.Named("conf-plain", plain),
        new Sides.Named("conf-broken", () -> SilentlyRebindingConnection.open(broken)), false);
    System.out.println("[conformance] mode broken (silently rebinding wrapper): " + scenarios
        + " lost-session scenarios, " + caught.size() + " differ from pgjdbc:\n  "
        + String.join("\n  ", caught));
    // The defect must show where it matters: a write after the loss reached the server.
    assertTrue(caught.stream().anyMatch(m -> m.startsWith("lost-session/autocommit:")
        && m.contains("SERVER rows t: pgjdbc=1|a broken=1|a;3|c")), String.join("\n", caught));
    assertTrue(caught.stream().anyMatch(m -> m.startsWith("lost-session/in-transaction:")),
        String.join("\n", caught));
  }

  @Test
  void pgjdbcAgreesWithItself() throws Exception {
    Sides.Opener a = direct("conf-self-a");
    Sides.Opener b = direct("conf-self-b");
    int n = Scenarios.all().size();
    List<String> differ = differing("pgjdbc-again", s -> true, new Sides.Named("conf-self-a", a),
        new Sides.Named("conf-self-b", b), true);
    System.out.println("[conformance] mode pgjdbc-again: " + n + " scenarios, " + differ.size()
        + " differ");
    assertEquals(List.of(), differ, "pgjdbc must agree with itself on every scenario");
  }
}
