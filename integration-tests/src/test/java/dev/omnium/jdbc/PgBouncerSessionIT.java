package dev.omnium.jdbc;

import dev.omnium.sandbox.PgBouncer;
import dev.omnium.sandbox.testkit.PgSandbox;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link PgBouncerSuite} through PgBouncer's session pooling, its default configuration. */
class PgBouncerSessionIT extends PgBouncerSuite {
  @RegisterExtension
  static final PgSandbox SANDBOX = sandbox(PgBouncer.Mode.SESSION).build();

  @Override
  PgSandbox sandbox() {
    return SANDBOX;
  }

  @Override
  boolean pinsSessions() {
    return true;
  }
}
