package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code java -jar driver/target/omnium-jdbc.jar heartbeat|check URL}, as a user runs them. */
class CommandLineIT {
  static final Path JAR = Path.of("..", "driver", "target", "omnium-jdbc.jar");
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).withoutHeartbeat().build();

  static String url() {
    return SANDBOX.url("cli", "heartbeatInterval=200ms&maxAge=2s");
  }

  static Process java(Path output, String... args) throws Exception {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new java.util.ArrayList<>(List.of(javaBin, "-jar", JAR.toString()));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output.toFile()).start();
  }

  @Test
  void theSidecarWritesTheHeartbeatAndCheckReportsHealthy() throws Exception {
    assertTrue(Files.isRegularFile(JAR), "the driver jar is built before the integration tests: " + JAR.toAbsolutePath());
    Path sidecarOut = Files.createTempFile("omnium-heartbeat", ".log");
    Process sidecar = java(sidecarOut, "heartbeat", url());
    try {
      Poll.until(Duration.ofSeconds(30), "the sidecar's heartbeat on the primary", () -> {
        try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT extract(epoch FROM now() - beat_at) FROM replica_heartbeat")) {
          return rs.next() && rs.getDouble(1) < 1.0;
        }
      });
      SANDBOX.cluster().awaitCaughtUp(SANDBOX.replica(0));
      Path checkOut = Files.createTempFile("omnium-check", ".log");
      Process check = java(checkOut, "check", url());
      assertTrue(check.waitFor(60, TimeUnit.SECONDS), "check finished");
      String report = Files.readString(checkOut, StandardCharsets.UTF_8);
      assertEquals(0, check.exitValue(), report);
      assertTrue(report.contains("HEALTHY"), report);
      assertTrue(report.contains(SANDBOX.replica(0).hostPort()), report);
    } finally {
      sidecar.destroy();
      if (!sidecar.waitFor(10, TimeUnit.SECONDS)) sidecar.destroyForcibly();
    }
    String log = Files.readString(sidecarOut, StandardCharsets.UTF_8);
    assertTrue(log.contains("heartbeat writer"), log);
    new File(sidecarOut.toString()).delete();
  }
}
