package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Without OpenTelemetry (the driver's own class path has none) the tracing adapter is off and
 * every entry is a no-op; what it does with the agent is proven by otel-tests' forked JVMs.
 */
class TracingTest {
  @Test
  void withoutOpenTelemetryNothingIsFoundAndNothingHappens() {
    assertThrows(ClassNotFoundException.class,
        () -> Class.forName("io.opentelemetry.api.trace.Span"));
    assertFalse(Tracing.ON);
    assertFalse(Tracing.QUIET);
    assertEquals("none", Tracing.SOURCE);
    assertNull(Tracing.quietBegin());
    Tracing.quietEnd(null);
    Tracing.quietThread();
    assertFalse(Tracing.quiet());
  }

  @Test
  void aNamespaceNamesTheDatabaseAloneOrWithASchema() {
    assertTrue(Tracing.names("shop", "shop"));
    assertTrue(Tracing.names("shop|public", "shop"));
    assertFalse(Tracing.names("shops", "shop"));
    assertFalse(Tracing.names("other|shop", "shop"));
    assertFalse(Tracing.names(null, "shop"));
  }
}
