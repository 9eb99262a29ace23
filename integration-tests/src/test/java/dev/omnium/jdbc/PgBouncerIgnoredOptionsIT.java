package dev.omnium.jdbc;

import dev.omnium.sandbox.PgBouncer;
import dev.omnium.sandbox.testkit.PgSandbox;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link PgBouncerSuite} through transaction pooling with {@code ignore_startup_parameters =
 * options}, what a search for PgBouncer's refusal finds: the bouncer then accepts the startup
 * packet's options and drops them without a word.
 */
class PgBouncerIgnoredOptionsIT extends PgBouncerSuite {
  @RegisterExtension
  static final PgSandbox SANDBOX = sandbox(PgBouncer.Mode.TRANSACTION)
      .pgbouncerSetting("ignore_startup_parameters", "options").build();

  @Override
  PgSandbox sandbox() {
    return SANDBOX;
  }
}
