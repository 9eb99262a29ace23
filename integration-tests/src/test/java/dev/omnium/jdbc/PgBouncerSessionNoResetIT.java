package dev.omnium.jdbc;

import dev.omnium.sandbox.PgBouncer;
import dev.omnium.sandbox.testkit.PgSandbox;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link PgBouncerSuite} through session pooling with {@code server_reset_query} empty: a server
 * session goes to the next client with whatever the last one set, so omnium cannot prove that
 * settings set for a session go away with it, and sets them with each transaction instead.
 */
class PgBouncerSessionNoResetIT extends PgBouncerSuite {
  @RegisterExtension
  static final PgSandbox SANDBOX = sandbox(PgBouncer.Mode.SESSION)
      .pgbouncerSetting("server_reset_query", "").build();

  @Override
  PgSandbox sandbox() {
    return SANDBOX;
  }
}
