package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A read the fallback cap keeps waiting while the replica is stale goes to the replica as soon as
 * the replica is fresh again, instead of waiting for the primary's capped sessions (which the
 * readers ahead of it may hold long, and then failing after poolTimeout): with
 * {@code fallbackPoolSize=1} held by one read-only transaction on the primary, a second one
 * waits; replay resumes; the second runs on the replica (the server says so) while the first
 * still holds the primary's session.
 */
@ExtendWith(LogScanned.class)
class FallbackRerouteIT {
  /** Long enough that only a reroute, not a timeout, can end the second read's wait. */
  static final Duration POOL_TIMEOUT = Duration.ofSeconds(60);

  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(1).healAfterEach().build();

  static String url(String app) {
    return SANDBOX.url(app, "maxAge=1s&heartbeatInterval=100ms&fallbackPoolSize=1"
        + "&poolTimeout=" + POOL_TIMEOUT.toMillis() + "ms");
  }

  interface Source {
    Connection open() throws SQLException;
  }

  @Test
  void driverMode() throws Exception {
    String url = url("reroutedriver");
    reroute(() -> DriverManager.getConnection(url));
  }

  @Test
  void dataSourceMode() throws Exception {
    try (OmniumDataSource db = new OmniumDataSource(url("reroutedatasource"))) {
      reroute(db::getConnection);
    }
  }

  private static void reroute(Source source) throws Exception {
    try (Connection holder = source.open()) {
      holder.setReadOnly(true);
      Poll.until(Duration.ofSeconds(15), "a fresh replica", () -> Where.of(holder).inRecovery());
      SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
      Poll.until(Duration.ofSeconds(15), "the replica to go stale",
          () -> !Where.of(holder).inRecovery());
      holder.setAutoCommit(false);
      Where held = Where.of(holder); // the cap's one session, until the commit below
      assertFalse(held.inRecovery(), "the holder reads on the primary: " + held);

      CompletableFuture<Where> second = new CompletableFuture<>();
      Thread reader = new Thread(() -> {
        try (Connection c = source.open()) {
          c.setReadOnly(true);
          c.setAutoCommit(false);
          second.complete(Where.of(c));
          c.commit();
        } catch (Throwable e) {
          second.completeExceptionally(e);
        }
      }, "reroute-test-reader");
      reader.setDaemon(true);
      reader.start();
      // it waits for the cap, not for anything else
      Poll.until(Duration.ofSeconds(15), "the second read to wait for the fallback cap",
          () -> Arrays.stream(reader.getStackTrace())
              .anyMatch(f -> f.getClassName().endsWith("FallbackBudget")
                  && f.getMethodName().equals("acquire")));
      assertFalse(second.isDone(), "the cap's one session is held");

      SANDBOX.cluster().resumeReplay(SANDBOX.replica(0));
      Where w = second.get(30, TimeUnit.SECONDS);
      assertTrue(w.inRecovery(), "the second read ran on the replica: " + w);
      assertEquals(SANDBOX.replica(0).port(), w.port(), w.toString());
      assertEquals(held.pid(), Where.of(holder).pid(),
          "the first still holds the primary's session: nothing was given back to the second");
      holder.commit();
    }
  }
}
