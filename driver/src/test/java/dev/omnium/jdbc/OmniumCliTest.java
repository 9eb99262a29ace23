package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The command line's argument handling (the commands themselves run against servers in CheckIT).
 */
class OmniumCliTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return OmniumCli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void unknownCommandsPrintUsage() {
    assertEquals(64, run());
    assertEquals(64, run("status", "jdbc:omnium:postgresql://h/db"));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("usage: java -jar omnium-jdbc.jar"
        + " check"));
  }

  @Test
  void aBadUrlIsOneClearLineWithoutThePassword() {
    assertEquals(2, run("heartbeat", "jdbc:omnium:postgresql://h/db?maxAge=5x&password=s3cr3t-pw"));
    String e = err.toString(StandardCharsets.UTF_8);
    assertTrue(e.contains("maxAge"), e);
    assertFalse(e.contains("s3cr3t-pw"), e);
  }
}
