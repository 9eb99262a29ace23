package dev.omnium.ops.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.ops.Retention;
import dev.omnium.ops.RetentionRules;
import dev.omnium.sandbox.testkit.Json;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The driver's {@code check} (a forked JVM, as an operator runs it) shows what omnium-ops
 * recorded: per rule the months ahead, the oldest month kept, rows in a default partition, the
 * last run; the holds; notes for what needs a look, without changing the exit status.
 */
class CheckRetentionIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();

  @TempDir
  static Path dir;

  record Result(int exit, String out) { }

  static Result check(String... extra) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"),
        "bin", "java").toString(), "-cp", System.getProperty("java.class.path"),
        "dev.omnium.jdbc.OmniumCli", "check", SANDBOX.url("check", "maxAge=5s")));
    cmd.addAll(List.of(extra));
    Path out = Files.createTempFile(dir, "check", ".txt");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile())
        .start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS));
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
  }

  @Test
  void checkShowsTheRetentionSection() throws Exception {
    Result before = check();
    assertTrue(before.out.contains("(no omnium-ops tables: retention is not set up on this"
        + " database)"), before.out);

    Db.monthlyTable(SANDBOX, "metrics", "2026-10", 2);
    SANDBOX.execOnPrimary("CREATE TABLE metrics_default PARTITION OF metrics DEFAULT",
        "INSERT INTO metrics (at) VALUES ('2025-01-01 00:00:00+00'), ('2025-01-02 00:00:00+00')");
    Db.monthlyTable(SANDBOX, "audits", "2026-01", 12);
    Properties p = new Properties();
    p.setProperty("user", SANDBOX.cluster().user());
    Retention r = Retention.builder(SANDBOX.primary().jdbcUrl(), p)
        .rules(RetentionRules.parse("check.rules", "metrics month at 400d\naudits month at 30d"))
        .build();
    r.hold("audits", "tax inspection", "carol");
    r.run(LocalDate.now());

    Result text = check();
    assertEquals(0, text.exit, text.out); // retention findings are notes
    assertTrue(text.out.contains("retention (recorded by omnium-ops on the primary)"), text.out);
    assertTrue(text.out.contains("metrics month at 400d"), text.out);
    assertTrue(text.out.contains("NOTE     primary") && text.out.contains("retention: metrics"
        + " month at 400d: 2 rows in the default partition"), text.out);
    assertTrue(text.out.contains("public.audits") && text.out.contains("carol")
        && text.out.contains("tax inspection"), text.out);

    Result json = check("--json");
    @SuppressWarnings("unchecked")
    Map<String, Object> root = (Map<String, Object>) Json.parse(json.out);
    @SuppressWarnings("unchecked")
    Map<String, Object> retention = (Map<String, Object>) root.get("retention");
    assertEquals(Boolean.TRUE, retention.get("setUp"));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> rules = (List<Map<String, Object>>) retention.get("rules");
    assertEquals("audits month at 30d", rules.get(0).get("rule"));
    assertEquals(3.0, rules.get(0).get("monthsAhead"));
    assertEquals(true, rules.get(0).get("held"));
    assertEquals(2.0, rules.get(1).get("defaultRows"));
    assertEquals("problem", rules.get(1).get("outcome"));
  }
}
