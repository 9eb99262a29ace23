package dev.omnium.ops;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code java -jar omnium-ops.jar run|hold|release URL ...}: the daily retention run and holds,
 * from the command line. Exit status of {@code run}: 0 all went well, 1 something was held or a
 * problem was reported (or another process holds the run), 2 an error (bad arguments or rules
 * included). {@code hold}/{@code release}: 0 changed, 1 nothing to change, 2 an error.
 */
public final class OpsCli {
  static final String USAGE = String.join("\n",
      "usage: java -jar omnium-ops.jar run URL --rules FILE [--today YYYY-MM-DD] [--dry-run]",
      "                                    [--lock-timeout 2s] [--lock-retries 5] [--batch 10000]"
          + " [--months-ahead 3]",
      "       java -jar omnium-ops.jar hold URL TABLE --reason TEXT --by WHO",
      "       java -jar omnium-ops.jar release URL TABLE --by WHO",
      "URL: the primary's jdbc:postgresql: URL, or a jdbc:omnium:postgresql: URL");

  private OpsCli() {
  }

  /**
   * @param args the command line
   */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs a command; returns its exit status. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length < 2) {
      err.println(USAGE);
      return RetentionReport.ERROR;
    }
    try {
      switch (args[0]) {
        case "run":
          return retention(args, out);
        case "hold":
        case "release":
          return hold(args, out);
        default:
          throw new IllegalArgumentException("unknown command '" + args[0]
              + "': run, hold or release");
      }
    } catch (IllegalArgumentException e) {
      err.println("omnium-ops: " + e.getMessage());
      err.println(USAGE);
      return RetentionReport.ERROR;
    } catch (IOException | SQLException | RuntimeException e) {
      err.println("omnium-ops: " + Secrets.mask(Sql.message(e)));
      return RetentionReport.ERROR;
    }
  }

  private static int retention(String[] args, PrintStream out) throws IOException {
    Map<String, String> o = options(args, 2, Set.of("--rules", "--today", "--lock-timeout",
        "--lock-retries", "--batch", "--months-ahead"), Set.of("--dry-run"));
    String rulesFile = o.get("--rules");
    if (rulesFile == null) {
      throw new IllegalArgumentException("run needs --rules FILE");
    }
    List<RetentionRule> rules = RetentionRules.read(Path.of(rulesFile));
    LocalDate today = Retention.todayUtc();
    if (o.containsKey("--today")) {
      try {
        today = LocalDate.parse(o.get("--today"));
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException("bad --today '" + o.get("--today")
            + "': expected YYYY-MM-DD");
      }
    }
    Retention.Builder b = Retention.builder(args[1], null).rules(rules);
    if (o.containsKey("--lock-timeout")) {
      b.lockTimeout(duration("--lock-timeout", o.get("--lock-timeout")));
    }
    if (o.containsKey("--lock-retries")) {
      b.lockRetries(integer("--lock-retries", o.get("--lock-retries")));
    }
    if (o.containsKey("--batch")) {
      b.batchSize(integer("--batch", o.get("--batch")));
    }
    if (o.containsKey("--months-ahead")) {
      b.monthsAhead(integer("--months-ahead", o.get("--months-ahead")));
    }
    Retention retention = b.build();
    out.println("omnium-ops: " + (o.containsKey("--dry-run") ? "planning" : "running") + " "
        + rules.size() + " rule(s) from " + rulesFile + " on " + Secrets.mask(args[1]));
    RetentionReport report = o.containsKey("--dry-run") ? retention.plan(today)
        : retention.run(today);
    out.print(report.text());
    out.flush();
    return report.exitCode();
  }

  private static int hold(String[] args, PrintStream out) throws SQLException {
    boolean hold = args[0].equals("hold");
    if (args.length < 3 || args[2].startsWith("--")) {
      throw new IllegalArgumentException(args[0] + " needs URL TABLE");
    }
    Map<String, String> o = options(args, 3, hold ? Set.of("--reason", "--by") : Set.of("--by"),
        Set.of());
    if (o.get("--by") == null || (hold && o.get("--reason") == null)) {
      throw new IllegalArgumentException(args[0] + " needs " + (hold ? "--reason TEXT and " : "")
          + "--by WHO");
    }
    Retention retention = Retention.builder(args[1], null).build();
    Retention.HoldResult r = hold ? retention.hold(args[2], o.get("--reason"), o.get("--by"))
        : retention.release(args[2], o.get("--by"));
    out.println("omnium-ops: " + r.message());
    return r.changed() ? RetentionReport.OK : RetentionReport.HELD_OR_PROBLEM;
  }

  private static Map<String, String> options(String[] args, int from, Set<String> valued,
      Set<String> flags) {
    Map<String, String> o = new HashMap<>();
    List<String> extra = new ArrayList<>();
    for (int i = from; i < args.length; i++) {
      String a = args[i];
      if (flags.contains(a)) {
        o.put(a, "");
      } else if (valued.contains(a)) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(a + " needs a value");
        }
        o.put(a, args[++i]);
      } else {
        extra.add(a);
      }
    }
    if (!extra.isEmpty()) {
      throw new IllegalArgumentException("unexpected argument '" + extra.get(0) + "'");
    }
    return o;
  }

  private static int integer(String option, String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad " + option + " '" + value + "': a whole number");
    }
  }

  /** {@code 250ms}, {@code 2s}, {@code 1m}. */
  static Duration duration(String option, String value) {
    try {
      if (value.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
      }
      if (value.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
      }
      if (value.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(value.substring(0, value.length() - 1)));
      }
    } catch (NumberFormatException e) {
      // falls through to the error below
    }
    throw new IllegalArgumentException("bad " + option + " '" + value + "': like 250ms, 2s or 1m");
  }
}
