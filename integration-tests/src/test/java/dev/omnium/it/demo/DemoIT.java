package dev.omnium.it.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.Demo;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The README's first command, end to end with short phases. */
@ExtendWith(PgClusterLogsOnFailure.class)
class DemoIT {
  @AfterAll
  static void down() {
    OmniumDriver.shutdown();
  }

  @Test
  void theDemoWalksEveryPhaseAndUsesAllThreeRoutes() throws Exception {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    Demo.Summary s = new Demo(Duration.ofSeconds(4), out, false).run();
    String printed = buffer.toString(StandardCharsets.UTF_8);
    System.out.println(printed);
    assertTrue(s.replicaReads() > 0, "reads on the replica");
    assertTrue(s.fallbackReads() > 0, "reads on the fallback pool");
    assertTrue(s.primaryReads() > 0, "exact reads on the primary");
    assertTrue(s.retries() >= 1, "at least one 40001 retried");
    assertTrue(s.maxFallbackInUse() <= s.fallbackPoolSize(), "the fallback cap held");
    assertEquals(0, s.readErrors(), "no read failed: " + printed);
    assertTrue(printed.contains("== summary"));
    assertTrue(printed.contains("5/5 replica killed"));
    assertTrue(!printed.contains("\r"), "plain lines when not a terminal");
  }
}
