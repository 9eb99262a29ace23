package dev.omnium.ops.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar ops/target/omnium-ops.jar} in a forked JVM: exit codes 0, 1 and 2, the report
 * on stdout, errors that say what is wrong, holds and releases, an omnium URL, no password in
 * any output.
 */
class OpsCliIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).requirePasswords().build();

  @TempDir
  static Path dir;

  record Result(int exit, String out, String err) { }

  static Result cli(String... args) throws Exception {
    String jar = System.getProperty("omnium.ops.jar", "target/omnium-ops.jar");
    assertTrue(new File(jar).isFile(), "the runnable jar is built: " + jar);
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin",
        "java").toString(), "-jar", jar));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
        .start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the command line ended");
    Result r = new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
    String password = SANDBOX.password();
    assertFalse(r.out.contains(password) || r.err.contains(password), "a password was printed");
    return r;
  }

  static String url() {
    return SANDBOX.primary().jdbcUrl() + "?user=" + SANDBOX.cluster().user() + "&password="
        + SANDBOX.password();
  }

  @Test
  void runHoldReleaseAndTheirExitCodes() throws Exception {
    Db.monthlyTable(SANDBOX, "clicks", "2026-01", 12);
    Path rules = dir.resolve("retention.rules");
    Files.writeString(rules, "# clicks leave after 60 days\nclicks month at 60d\n");

    Result plan = cli("run", url(), "--rules", rules.toString(), "--today", "2026-12-04",
        "--dry-run");
    assertEquals(0, plan.exit, plan.out + plan.err);
    assertTrue(plan.out.contains("would be dropped    public.clicks_2026_01"), plan.out);
    assertEquals(12, Db.partitions(SANDBOX, "clicks").size(), "a dry run changes nothing");

    Result held = cli("hold", url(), "clicks", "--reason", "audit 7", "--by", "bob");
    assertEquals(0, held.exit, held.out + held.err);
    Result again = cli("hold", url(), "clicks", "--reason", "audit 7", "--by", "bob");
    assertEquals(1, again.exit, again.out + again.err);
    assertTrue(again.out.contains("already held by bob"), again.out);

    // an omnium URL (with a replica) works too
    String omnium = SANDBOX.url("ops", null);
    Result run = cli("run", omnium, "--rules", rules.toString(), "--today", "2026-12-04");
    assertEquals(1, run.exit, run.out + run.err);
    assertTrue(run.out.contains("skipped: held       public.clicks_2026_01"), run.out);
    assertTrue(run.out.contains("password=***"), run.out);

    assertEquals(0, cli("release", url(), "clicks", "--by", "bob").exit);
    assertEquals(1, cli("release", url(), "clicks", "--by", "bob").exit);
    Result ok = cli("run", url(), "--rules", rules.toString(), "--today", "2026-12-04");
    assertEquals(0, ok.exit, ok.out + ok.err);
    assertTrue(ok.out.startsWith("omnium-ops: running 1 rule(s)"), ok.out);
    assertTrue(ok.out.contains("dropped             public.clicks_2026_09"), ok.out);
    assertEquals(List.of("clicks_2026_10", "clicks_2026_11", "clicks_2026_12", "clicks_2027_01",
        "clicks_2027_02", "clicks_2027_03"), Db.partitions(SANDBOX, "clicks"));
  }

  @Test
  void errorsExitTwoAndSayWhatIsWrong() throws Exception {
    Path bad = dir.resolve("bad.rules");
    Files.writeString(bad, "ok month at 30d\nbroken month at thirty\n");
    Result r = cli("run", url(), "--rules", bad.toString());
    assertEquals(2, r.exit);
    assertTrue(r.err.contains("bad.rules:2: bad keep 'thirty': days, like 30d"), r.err);

    Path none = dir.resolve("none.rules");
    Files.writeString(none, "nosuch month at 30d\n");
    Result missing = cli("run", url(), "--rules", none.toString());
    assertEquals(2, missing.exit);
    assertTrue(missing.out.contains("none.rules:1 ('nosuch month at 30d'): no table nosuch"),
        missing.out);

    Result today = cli("run", url(), "--rules", none.toString(), "--today", "04/12/2026");
    assertEquals(2, today.exit);
    assertTrue(today.err.contains("bad --today '04/12/2026': expected YYYY-MM-DD"), today.err);

    assertEquals(2, cli("run").exit);
    assertEquals(2, cli("frobnicate", url()).exit);
    Result noRules = cli("run", url());
    assertTrue(noRules.err.contains("run needs --rules FILE"), noRules.err);
    Result noHost = cli("hold", "jdbc:postgresql://127.0.0.1:1/x?password=s3cret&connectTimeout=2",
        "t", "--reason", "r", "--by", "me");
    assertEquals(2, noHost.exit);
    assertFalse(noHost.err.contains("s3cret"), noHost.err);
    Result notHeld = cli("hold", url(), "nosuch", "--reason", "r", "--by", "me");
    assertEquals(2, notHeld.exit);
    assertTrue(notHeld.err.contains("no table nosuch"), notHeld.err);
  }
}
