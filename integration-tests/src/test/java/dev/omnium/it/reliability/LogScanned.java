package dev.omnium.it.reliability;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension: marks the log before the class starts and, once it is done, scans every line
 * logged since for the distinctive password. Register it with {@code @Order(0)} before the
 * {@code PgSandbox} ({@code @Order(1)}), so that it runs after the sandbox stopped and the scan
 * covers what the driver logs while it shuts down.
 */
final class LogScanned implements BeforeAllCallback, AfterAllCallback {
  private int mark;

  @Override
  public void beforeAll(ExtensionContext context) {
    mark = LogCapture.mark();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    SecretScan scan = new SecretScan(SecretScan.PASSWORD);
    scan.lines(context.getRequiredTestClass().getSimpleName() + " log", LogCapture.since(mark));
    scan.assertClean();
  }
}
