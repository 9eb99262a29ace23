package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Several replicas: each watched, reads spread over the fresh ones, a stale one skipped. */
class TwoReplicasIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(2).build();

  @Test
  void readsUseBothFreshReplicasAndSkipAStaleOne() throws Exception {
    String url = SANDBOX.url("two", "maxAge=1s&heartbeatInterval=200ms");
    Set<Integer> replicaPorts = Set.of(SANDBOX.replica(0).port(), SANDBOX.cluster().replica(1).port());
    Poll.until(Duration.ofSeconds(10), "both replicas to be used", () -> {
      Set<Integer> seen = new TreeSet<>();
      for (int i = 0; i < 20; i++) {
        try (Connection c = DriverManager.getConnection(url)) {
          c.setReadOnly(true);
          Where w = Where.of(c);
          if (w.inRecovery()) seen.add(w.port());
        }
      }
      return seen.equals(replicaPorts);
    });

    SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
    try {
      Poll.until(Duration.ofSeconds(10), "reads to use only the fresh replica", () -> {
        Set<Integer> seen = new TreeSet<>();
        for (int i = 0; i < 10; i++) {
          try (Connection c = DriverManager.getConnection(url)) {
            c.setReadOnly(true);
            seen.add(Where.of(c).port());
          }
        }
        return seen.equals(Set.of(SANDBOX.cluster().replica(1).port()));
      });
    } finally {
      SANDBOX.cluster().resumeReplay(SANDBOX.replica(0));
    }
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      assertTrue(Where.of(c).inRecovery());
      assertEquals("two:replica", Where.of(c).applicationName());
    }
  }
}
