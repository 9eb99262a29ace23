package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test class's stub router ({@link StubSessions#router}), registered as a static
 * {@code @RegisterExtension} field: made before the class's first test, closed after its last
 * (its {@code @Nested} classes share it). Its logical connections run on a given stub primary.
 */
final class StubRouter implements BeforeAllCallback, AfterAllCallback {
  private final String applicationName;
  /** How many test classes (the outer one and its nested ones) are running. */
  private int running;
  private Router router;

  StubRouter(String applicationName) {
    this.applicationName = applicationName;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws SQLException {
    if (running++ == 0) router = StubSessions.router(applicationName);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (--running == 0) router.close();
  }

  /** A logical connection whose primary source lends {@code primary} and ignores its release. */
  OmniumConnection on(Connection primary) {
    return on(primary, () -> { });
  }

  /**
   * A logical connection whose primary source lends {@code primary} and runs {@code released}
   * each time the connection gives it back.
   */
  OmniumConnection on(Connection primary, Runnable released) {
    PrimarySource source = new PrimarySource() {
      @Override Connection open() { return primary; }
      @Override void release(Connection c, boolean dead) { released.run(); }
      @Override public void close() { }
    };
    return new OmniumConnection(router, source, router.defaultMaxAgeNanos, false);
  }
}
