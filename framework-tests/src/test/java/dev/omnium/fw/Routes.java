package dev.omnium.fw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Where;

/** Where a framework's unit of work ran, asserted on what the server reported. */
public final class Routes {
  private Routes() { }

  /**
   * @param w what the server reported
   * @param sandbox the cluster
   * @param app the router's application name
   */
  public static void assertOnReplica(Where w, PgSandbox sandbox, String app) {
    assertNotNull(w, "a SELECT reported where it ran");
    assertTrue(w.inRecovery(), "ran on a server in recovery: " + w);
    assertEquals(sandbox.replica().port(), w.port(), "ran on the replica: " + w);
    assertEquals(app + ":replica", w.applicationName());
  }

  /**
   * @param w what the server reported
   * @param sandbox the cluster
   * @param app the router's application name
   */
  public static void assertOnPrimary(Where w, PgSandbox sandbox, String app) {
    assertTrue(w.onPrimaryAs(app, sandbox.primary().port()),
        "ran on the primary's read-write route: " + w);
  }
}
