package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Without OpenTelemetry (the driver's own class path has none) the tracing adapter is off and
 * every entry is a no-op; what it does with the agent is proven by otel-tests' forked JVMs.
 */
class TracingTest {
  @Test
  void aServersPortIsBoxedOnceForTheSpansThatNameIt() {
    Long port = Tracing.port(5432);
    assertEquals(5432L, port);
    assertSame(port, Tracing.port(5432), "the same object: nothing allocated per statement");
    // 5448 shares 5432's slot: the right value, boxed again
    assertEquals(5448L, Tracing.port(5448));
    assertEquals(5432L, Tracing.port(5432));
    assertEquals(65535L, Tracing.port(65535));
  }

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
