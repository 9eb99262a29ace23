package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 item 3: a black-holed primary (frozen server processes: TCP is accepted, nothing
 * answers) ends fallback reads and primary work in flight within the route's statement timeout
 * plus {@code clientTimeoutMargin}, instead of hanging without limit.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
class ClientBoundsIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(0).withoutHeartbeat().build();
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
  }


  @Test
  void fallbackReadsAndPrimaryWorkInFlightEndWhenThePrimaryFreezes() throws Exception {
    // No replica: every read takes the fallback route on the primary.
    String url = "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?applicationName=bounds&statementTimeout=2s"
        + "&clientTimeoutMargin=1s&poolTimeout=2s&user=" + cluster.user();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    Connection read = DriverManager.getConnection(url);
    Connection write = DriverManager.getConnection(url);
    boolean frozen = false;
    try {
      read.setReadOnly(true);
      read.setAutoCommit(false);
      Where r = Where.of(read); // a read-only transaction bound to a fallback session
      assertEquals("bounds:fallback", r.applicationName());
      Where w = Where.of(write);
      assertEquals("bounds", w.applicationName());
      assertFalse(w.inRecovery());

      cluster.freeze(cluster.primary());
      frozen = true;
      long start = System.nanoTime();
      Future<SQLException> fallback = pool.submit(() -> FrozenServers.failureOf(read));
      Future<SQLException> primary = pool.submit(() -> FrozenServers.failureOf(write));
      SQLException fe = FrozenServers.within(fallback, "the fallback read");
      SQLException pe = FrozenServers.within(primary, "the primary statement");
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      System.out.println("FIGURE frozen primary, statementTimeout=2s + clientTimeoutMargin=1s:"
          + " fallback read and primary statement failed after " + millis + " ms ("
          + fe.getSQLState() + ", " + pe.getSQLState() + ")");
      assertLost(fe);
      assertLost(pe);
    } finally {
      if (frozen) cluster.thaw(cluster.primary());
      pool.shutdownNow();
      FrozenServers.closeQuietly(read);
      FrozenServers.closeQuietly(write);
    }
    // The lost sessions were evicted: new reads get fresh fallback sessions.
    Poll.until(Duration.ofSeconds(30), "fallback reads again after the thaw", () -> {
      try (Connection c = DriverManager.getConnection(url)) {
        c.setReadOnly(true);
        return "bounds:fallback".equals(Where.of(c).applicationName());
      }
    });
  }

  private static void assertLost(SQLException e) {
    String state = e.getSQLState();
    assertTrue(state != null && state.startsWith("08"), e + " / " + state);
  }
}
