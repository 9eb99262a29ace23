package dev.omnium.it.reliability;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension: marks the log before the class starts and, once it is done, scans every line
 * logged since for the distinctive password. Register it on the class
 * ({@code @ExtendWith(LogScanned.class)}): JUnit registers class-level extensions before the
 * {@code PgSandbox} field and runs their after-all callbacks last, so the scan covers what the
 * driver logs while the sandbox shuts it down.
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
