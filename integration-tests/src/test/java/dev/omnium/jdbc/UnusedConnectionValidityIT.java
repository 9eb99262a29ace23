package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Sessions;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 30, item 1 (routing contract, rule 7): {@code isValid()} of a connection no statement has
 * used yet answers as pgjdbc's would, without opening anything while the router hears from the
 * primary, and by asking the server when it does not: a stopped primary makes it false, as it
 * makes pgjdbc's connection false, and a new connection is valid again once the primary is back.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
class UnusedConnectionValidityIT {
  @RegisterExtension
  final PgSandbox sandbox = PgSandbox.builder().replicas(1).build();

  @Test
  void anUnusedConnectionIsInvalidOnceThePrimaryIsGoneAsPgjdbcsIs() throws Exception {
    String app = "unused";
    String url = sandbox.url(app, "heartbeatInterval=200ms&maxAge=2s");
    try (Connection proving = DriverManager.getConnection(url);
         Connection unused = DriverManager.getConnection(url);
         Connection pgjdbc = sandbox.cluster().connect(sandbox.primary())) {
      int before = Sessions.count(sandbox.cluster(), sandbox.primary(), app);
      assertTrue(unused.isValid(2));
      assertEquals(before, Sessions.count(sandbox.cluster(), sandbox.primary(), app),
          "isValid() opened nothing while the primary answers");
      sandbox.cluster().stop(sandbox.primary(), false);
      Poll.until(Duration.ofSeconds(10), "pgjdbc's connection to report itself invalid",
          () -> !pgjdbc.isValid(1));
      Poll.until(Duration.ofSeconds(10), "the unused connection to report itself invalid",
          () -> !unused.isValid(1));
      assertFalse(proving.isValid(1), "the proving connection's session ended with the server");
    } finally {
      sandbox.cluster().start(sandbox.primary());
    }
    try (Connection again = DriverManager.getConnection(url)) {
      assertTrue(again.isValid(2));
      assertFalse(Where.of(again).inRecovery());
    }
  }
}
