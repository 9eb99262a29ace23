package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.fail;

import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** What the suites that freeze a server (SIGSTOP) share: a statement that must fail, not hang. */
final class FrozenServers {
  /** Seconds a statement may take before it counts as hanging: far above every bound tested. */
  static final long HANG_SECONDS = 60;

  private FrozenServers() { }

  /** Runs {@link Where#of} on {@code c}: the error it ends with, or null if it succeeded. */
  static SQLException failureOf(Connection c) {
    try {
      Where.of(c);
      return null;
    } catch (SQLException e) {
      return e;
    }
  }

  /** The error {@code f} ended with; fails the test if it succeeded or still hangs. */
  static SQLException within(Future<SQLException> f, String what) throws Exception {
    try {
      SQLException e = f.get(HANG_SECONDS, TimeUnit.SECONDS);
      if (e == null) fail(what + " succeeded on a frozen server");
      return e;
    } catch (TimeoutException hang) {
      throw new AssertionError(what + " still hangs after " + HANG_SECONDS + " s on a frozen server");
    } catch (ExecutionException e) {
      throw new AssertionError(what + " failed unexpectedly", e.getCause());
    }
  }

  static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // the session is gone
    }
  }
}
