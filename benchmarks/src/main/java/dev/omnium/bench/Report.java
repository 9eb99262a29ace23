package dev.omnium.bench;

import dev.omnium.sandbox.testkit.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns a JMH JSON result file (plus the {@link RoundTrips}, {@link Interleaved} and {@link Profile}
 * sections) into the Markdown of {@code docs/performance.md} and of the README's performance summary
 * ({@code --readme-out}; {@code --check-readme README.md} fails when the README holds another):
 * one table per case with the score, its 99.9% error, the ratio to the limit and the allocation per
 * operation, then the targets with a verdict computed from the same numbers, then the hand-written
 * analysis ({@code benchmarks/ANALYSIS.md}).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.Report --results R.json [--roundtrips R.md]
 *     [--interleaved I.md] [--profile P.md] [--pgbouncer B.md] [--fleet F.md]
 *     [--analysis benchmarks/ANALYSIS.md] [--out docs/performance.md]
 *     [--readme-out README-performance.md] [--check-readme README.md] [--settings "jmh args"] [--command "..."]
 * java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.Report --check R.json --expect N
 * </pre>
 */
public final class Report {
  private static final String[] READERS = {"REPLICA_POOL", "OMNIUM_DRIVER", "OMNIUM_DATASOURCE", "PGJDBC_MULTIHOST",
      "AWS_WRAPPER_SRW"};
  private static final String[] WRITERS = {"PRIMARY_POOL", "OMNIUM_DRIVER", "OMNIUM_DATASOURCE"};

  /** One JMH result row. */
  static final class Result {
    String benchmark; // e.g. ReadTxBenchmark.readTx
    String param;     // the contender or decision
    String mode;
    int threads;
    double score;
    double error;
    String unit;
    double alloc = Double.NaN;
    double allocError = Double.NaN;
    /** Client thread CPU µs per operation (ClientCpu counters), NaN when not measured. */
    double cpu = Double.NaN;
  }

  private final List<Result> results;
  /** The Interleaved section (Markdown with machine-readable comments), or null. */
  private String interleaved;
  /** The Profile section (JFR breakdown, and perf's when recorded), or null. */
  private String profile;
  /** Case 9 (PgBouncerCase), or null. */
  private String pgbouncer;
  /** The {@link Fleet} section, or null. */
  private String fleet;

  private Report(List<Result> results) {
    this.results = results;
  }

  @SuppressWarnings("unchecked")
  static List<Result> load(Path json) throws IOException {
    List<Result> out = new ArrayList<>();
    for (Object o : (List<Object>) Json.parse(Files.readString(json))) {
      Map<String, Object> m = (Map<String, Object>) o;
      Result r = new Result();
      String full = (String) m.get("benchmark");
      String[] parts = full.split("\\.");
      r.benchmark = parts[parts.length - 2] + "." + parts[parts.length - 1];
      Map<String, Object> params = (Map<String, Object>) m.get("params");
      if (params != null && !params.isEmpty()) r.param = String.valueOf(params.values().iterator().next());
      r.mode = (String) m.get("mode");
      r.threads = (int) jmhNumber(m.get("threads"));
      Map<String, Object> pm = (Map<String, Object>) m.get("primaryMetric");
      r.score = jmhNumber(pm.get("score"));
      r.error = jmhNumber(pm.get("scoreError"));
      r.unit = (String) pm.get("scoreUnit");
      Map<String, Object> sec = (Map<String, Object>) m.get("secondaryMetrics");
      if (sec != null && sec.get("gc.alloc.rate.norm") != null) {
        Map<String, Object> a = (Map<String, Object>) sec.get("gc.alloc.rate.norm");
        r.alloc = jmhNumber(a.get("score"));
        r.allocError = jmhNumber(a.get("scoreError"));
      }
      if (sec != null && sec.get("clientCpuNanos") != null && sec.get("clientOps") != null) {
        double nanos = jmhNumber(((Map<String, Object>) sec.get("clientCpuNanos")).get("score"));
        double ops = jmhNumber(((Map<String, Object>) sec.get("clientOps")).get("score"));
        if (ops > 0) r.cpu = nanos / ops / 1000.0;
      }
      out.add(r);
    }
    return out;
  }

  public static void main(String[] args) throws IOException {
    Path results = null;
    Path roundTrips = null;
    Path interleaved = null;
    Path analysis = null;
    Path out = null;
    Path check = null;
    Path readmeOut = null;
    Path checkReadme = null;
    Path profilePath = null;
    Path pgbouncerPath = null;
    Path fleetPath = null;
    int expect = 0;
    String settings = "";
    String command = "benchmarks/run.sh";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--results": results = Path.of(args[++i]); break;
        case "--roundtrips": roundTrips = Path.of(args[++i]); break;
        case "--interleaved": interleaved = Path.of(args[++i]); break;
        case "--profile": profilePath = Path.of(args[++i]); break;
        case "--pgbouncer": pgbouncerPath = Path.of(args[++i]); break;
        case "--fleet": fleetPath = Path.of(args[++i]); break;
        case "--analysis": analysis = Path.of(args[++i]); break;
        case "--out": out = Path.of(args[++i]); break;
        case "--settings": settings = args[++i]; break;
        case "--command": command = args[++i]; break;
        case "--check": check = Path.of(args[++i]); break;
        case "--readme-out": readmeOut = Path.of(args[++i]); break;
        case "--check-readme": checkReadme = Path.of(args[++i]); break;
        case "--expect": expect = Integer.parseInt(args[++i]); break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (check != null) {
      System.exit(check(check, expect));
    }
    if (results == null) throw new IllegalArgumentException("--results is required");
    Report report = new Report(load(results));
    report.interleaved = interleaved == null || !Files.exists(interleaved) ? null : Files.readString(interleaved);
    report.profile = profilePath == null || !Files.exists(profilePath) ? null : Files.readString(profilePath);
    report.pgbouncer = pgbouncerPath == null || !Files.exists(pgbouncerPath) ? null
        : Files.readString(pgbouncerPath);
    report.fleet = fleetPath == null || !Files.exists(fleetPath) ? null : Files.readString(fleetPath);
    String rtText = roundTrips == null || !Files.exists(roundTrips) ? null : Files.readString(roundTrips);
    String md = report.markdown(results, rtText,
        analysis == null || !Files.exists(analysis) ? null : Files.readString(analysis), settings, command);
    String summary = report.readmeSummary(results, rtText, command);
    if (readmeOut != null) {
      Files.writeString(readmeOut, summary);
      System.out.println("written " + readmeOut);
    }
    if (checkReadme != null) {
      // the README's performance summary must be this run's block, verbatim (a hand copy drifts)
      boolean same = Files.readString(checkReadme).replace("\r\n", "\n").contains(summary.strip());
      System.out.println(checkReadme + (same ? ": performance summary matches the results"
          : ": performance summary differs from the results: paste " + (readmeOut != null ? readmeOut
          : "the block written with --readme-out") + " under its '## Performance' heading"));
      if (!same) System.exit(1);
    }
    if (out == null) {
      System.out.println(md);
    } else {
      Files.writeString(out, md);
      System.out.println("written " + out);
    }
  }

  /** Smoke check: the expected number of results, each with a finite positive score. */
  static int check(Path json, int expect) throws IOException {
    List<Result> rs = load(json);
    int bad = 0;
    for (Result r : rs) {
      boolean ok = Double.isFinite(r.score) && r.score > 0;
      System.out.printf(Locale.ROOT, "%-8s %-45s %-18s %12.3f %s%n", ok ? "ok" : "BAD", r.benchmark,
          r.param == null ? "" : r.param, r.score, r.unit);
      if (!ok) bad++;
    }
    if (rs.size() < expect) {
      System.out.println("expected " + expect + " results, got " + rs.size());
      return 1;
    }
    if (bad > 0) {
      System.out.println(bad + " results without a score");
      return 1;
    }
    System.out.println(rs.size() + " passed, 0 failed");
    return 0;
  }

  private Result find(String benchmark, String param) {
    for (Result r : results) {
      if (r.benchmark.equals(benchmark) && param.equals(r.param)) return r;
    }
    return null;
  }

  private String markdown(Path resultsFile, String roundTrips, String analysis, String settings, String command) {
    StringBuilder b = new StringBuilder();
    b.append("# Performance\n\n");
    b.append("<!-- Generated by dev.omnium.bench.Report from ").append(resultsFile.getFileName())
        .append("; the analysis at the end comes from benchmarks/ANALYSIS.md. Re-run, do not edit. -->\n\n");
    b.append("Every number below comes from one run of one command, on one machine, against real servers: a ")
        .append("PostgreSQL 18 primary and one streaming replica started by the sandbox for each benchmark trial ")
        .append("(fsync off, loopback network), with the same tables, pool sizes (").append(Contender.POOL_SIZE)
        .append(" connections to the server that serves the work) and work for every contender.\n\n");
    b.append("```\n").append(command).append("\n```\n\n");
    b.append("Results: `benchmarks/results/").append(resultsFile.getFileName()).append("` (JMH JSON). JMH settings: `")
        .append(settings.isEmpty() ? "see the results file" : settings).append("`. ");
    b.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ")
        .append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.arch")).append(", Java ")
        .append(System.getProperty("java.version")).append("; client, primary and replica share these cores. ");
    b.append("Errors are JMH's 99.9% confidence half-intervals (± n/a with a single iteration); allocation is ")
        .append("`gc.alloc.rate.norm` from `-prof gc` (bytes per operation, client side); *client CPU* is the CPU time ")
        .append("(user + system, so it includes the kernel's loopback work) of the benchmark thread per operation, ")
        .append("i.e. what the client spends without waiting for the servers. JMH runs each contender in ")
        .append("its own fork, one after the other: contenders are not interleaved within a benchmark, so drifting ")
        .append("load on the machine shows up as noise between rows.\n\n");

    b.append(targets(roundTrips));

    b.append("## 1. Read-only transaction, Spring shape, 1 thread\n\n");
    b.append("Borrow from the pool, `setReadOnly(true)`, `setAutoCommit(false)`, one-row `SELECT` by primary key ")
        .append("(prepared statement), `commit`, reset (`setAutoCommit(true)`, `setReadOnly(false)`), return.\n\n");
    table(b, "ReadTxBenchmark.readTx", READERS, "REPLICA_POOL", "(a)");
    if (interleaved != null) {
      b.append(interleaved.replaceAll("(?m)^<!--.*-->\\R", "").replace("### Case 1 interleaved", "### 1b. Case 1 interleaved"));
    }

    b.append("## 6. Throughput of case 1 with 1, 4 and 16 threads\n\n");
    b.append("Operations per millisecond, all threads together (higher is better); ratio to (a) at the same thread ")
        .append("count. Two cores run the client and both servers, so more threads mostly add contention.\n\n");
    b.append("| contender | 1 thread (ops/ms) | × (a) | 4 threads (ops/ms) | × (a) | 16 threads (ops/ms) | × (a) | alloc B/op (16 threads) |\n");
    b.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (String c : READERS) {
      b.append("| ").append(label(c));
      for (String m : new String[] {"threads01", "threads04", "threads16"}) {
        Result r = find("ScalingBenchmark." + m, c);
        Result limit = find("ScalingBenchmark." + m, "REPLICA_POOL");
        if (r == null && m.equals("threads01")) {
          // Not run separately: the same work on one thread is case 1; ops/ms = 1000 / (µs/op).
          Result one = find("ReadTxBenchmark.readTx", c);
          Result oneLimit = find("ReadTxBenchmark.readTx", "REPLICA_POOL");
          if (one != null) {
            b.append(" | ").append(num(1000.0 / one.score)).append(" †").append(" | ")
                .append(oneLimit == null ? "–" : String.format(Locale.ROOT, "%.3f", oneLimit.score / one.score));
            continue;
          }
        }
        b.append(" | ").append(scoreWithError(r)).append(" | ").append(ratio(r, limit));
      }
      b.append(" | ").append(alloc(find("ScalingBenchmark.threads16", c))).append(" |\n");
    }
    if (find("ScalingBenchmark.threads01", "REPLICA_POOL") == null) {
      b.append("\n† 1 thread: case 1's own measurement converted (1000 / µs per op); the full run does not repeat it.\n");
    }
    b.append('\n');

    b.append("## 2. Write transaction, 1 thread\n\n");
    b.append("Borrow, `setAutoCommit(false)`, one `INSERT`, `commit`, reset, return, on the primary.\n\n");
    table(b, "WriteTxBenchmark.writeTx", WRITERS, "PRIMARY_POOL", "the limit");

    b.append("## 3. Read-only autocommit statement, reused PreparedStatement, 1 thread\n\n");
    b.append("One connection held per thread with `setReadOnly(true)` and auto-commit on; one `PreparedStatement` ")
        .append("prepared once; each operation binds a key, executes and reads the row. omnium routes each statement ")
        .append("(keeping its replica binding while the replica stays fresh).\n\n");
    table(b, "AutocommitReadBenchmark.autocommitRead", READERS, "REPLICA_POOL", "(a)");

    b.append("## 4. Routing decision alone (no I/O)\n\n");
    b.append("`NANO_TIME`: `System.nanoTime()` alone, the clock read that every decision includes (its cost is the ")
        .append("machine's clock source, not omnium's). ")
        .append("`IS_FRESH`: `LagWatcher.isFresh(System.nanoTime(), maxAge)`, the per-replica check (a watcher that ")
        .append("was never started). `PICK_1_REPLICA` / `PICK_2_REPLICAS`: the real `Router.pickReplica` of a live ")
        .append("`OmniumDataSource` whose watchers keep probing the sandbox replica in the background (two endpoint ")
        .append("names for the same replica in the second case). Both include one `System.nanoTime()` call.\n\n");
    b.append("`decide` reads the clock as the driver does; `decideClockGiven` is the same call with the reading ")
        .append("given, i.e. the decision's own logic.\n\n");
    b.append("| decision | `decide` ns/op | ± | alloc B/op | `decideClockGiven` ns/op | ± | alloc B/op |\n");
    b.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (String d : new String[] {"NANO_TIME", "IS_FRESH", "PICK_1_REPLICA", "PICK_2_REPLICAS"}) {
      Result r = find("RoutingDecisionBenchmark.decide", d);
      Result g = find("RoutingDecisionBenchmark.decideClockGiven", d);
      b.append("| `").append(d).append("` | ").append(r == null ? "–" : num(r.score)).append(" | ")
          .append(r == null ? "–" : err(r.error)).append(" | ").append(alloc(r)).append(" | ")
          .append(g == null ? "–" : num(g.score)).append(" | ").append(g == null ? "–" : err(g.error)).append(" | ")
          .append(alloc(g)).append(" |\n");
    }
    b.append('\n');

    b.append("## 5. Round trips\n\n");
    b.append(roundTrips == null ? "(not run: `java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.RoundTrips`)\n\n"
        : roundTrips.replace("### Stale replica", "### (7) Stale replica") + "\n");

    b.append("## 7. Stale replica (replay paused), timed\n\n");
    b.append("Case 1 while the replica's replay is paused: omnium serves read-only transactions from its fallback ")
        .append("pool on the primary, capped at ").append(Contender.FALLBACK_POOL_SIZE)
        .append(" connections. The limit is HikariCP straight to the primary with all ").append(Contender.POOL_SIZE)
        .append(" connections. With 16 threads omnium's reads queue for 4 sessions: that cap is the point (a stale ")
        .append("replica never floods the primary); what it costs in throughput depends on whether the primary has ")
        .append("idle cores, which a 2-core machine shared by client and servers does not.\n\n");
    b.append("| contender | 1 thread µs/op | ± | × limit | 16 threads ops/ms | ± | × limit | alloc B/op (1 thread) |\n");
    b.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (String c : WRITERS) {
      Result one = find("StaleReplicaBenchmark.staleReadTx", c);
      Result many = find("StaleReplicaBenchmark.staleThreads16", c);
      b.append("| ").append(label(c)).append(" | ").append(one == null ? "–" : num(one.score)).append(" | ")
          .append(one == null ? "–" : err(one.error)).append(" | ")
          .append(ratio(one, find("StaleReplicaBenchmark.staleReadTx", "PRIMARY_POOL"))).append(" | ")
          .append(many == null ? "–" : num(many.score)).append(" | ").append(many == null ? "–" : err(many.error))
          .append(" | ").append(ratio(many, find("StaleReplicaBenchmark.staleThreads16", "PRIMARY_POOL")))
          .append(" | ").append(alloc(one)).append(" |\n");
    }
    b.append('\n');

    if (profile != null) {
      b.append("## 8. Where omnium's extra client cost goes (JFR and perf breakdowns)\n\n");
      b.append(profile.replaceAll("(?m)^<!--.*-->\\R", "").replace("### Where", "### 8a. Where"));
    }

    if (pgbouncer != null) {
      b.append("## 9. Through PgBouncer\n\n");
      b.append(pgbouncer.replaceAll("(?m)^<!--.*-->\\R", "").replace("### Case 9: through PgBouncer\n\n", ""));
    }

    if (fleet != null) {
      b.append("## 10. A fleet of processes: what each process costs the servers\n\n");
      String section = fleet.replaceAll("(?m)^<!--.*-->\\R", "").replaceFirst("### A fleet of processes\\R\\R", "");
      for (char sub = 'a'; section.contains("\n#### ") || section.startsWith("#### "); sub++) {
        section = section.replaceFirst("(?m)^#### ", "### 10" + sub + ". ");
      }
      b.append(section);
    }

    if (analysis != null) b.append(analysis.strip()).append('\n');
    return b.toString();
  }

  private String targets(String roundTrips) {
    StringBuilder b = new StringBuilder("## Targets\n\n| target | measured | verdict |\n|---|---|---|\n");
    Result d = find("ReadTxBenchmark.readTx", "PGJDBC_MULTIHOST");
    Result e = find("ReadTxBenchmark.readTx", "AWS_WRAPPER_SRW");
    b.append(throughputTargets());
    b.append(overheadTarget());
    b.append(readYourWritesTarget());
    b.append(routingTarget());
    b.append(fleetTarget());
    if (roundTrips != null) {
      boolean missed = roundTrips.contains("TARGET MISSED");
      b.append("| round trips equal to the limit's in every case | omnium's round trips per unit of work against ")
          .append("the limit's (section 5): read-only transaction, write transaction, write transaction with ")
          .append("`readYourWrites=thread`, autocommit read, autocommit read every 600 ms | ")
          .append(missed ? "**missed**" : "met").append(" |\n");
    }
    for (String c : new String[] {"OMNIUM_DRIVER", "OMNIUM_DATASOURCE"}) {
      Result r = find("ReadTxBenchmark.readTx", c);
      StringBuilder m = new StringBuilder();
      if (r != null && d != null && e != null) {
        m.append("JMH: ").append(num(r.score)).append(" µs vs (d) ").append(num(d.score)).append(" µs, (e) ")
            .append(num(e.score)).append(" µs");
      }
      String verdict;
      double[] vd = interleavedLine("pair " + c + " PGJDBC_MULTIHOST");
      double[] ve = interleavedLine("pair " + c + " AWS_WRAPPER_SRW");
      String[] outcome = new String[2];
      double[][] ivs = new double[2][];
      if (vd != null && ve != null) {
        if (m.length() > 0) m.append("; ");
        m.append("interleaved ÷ (d): ").append(String.format(Locale.ROOT, "%.3f (95%% CI %.3f–%.3f)", vd[0], vd[1], vd[2]))
            .append(", ÷ (e): ").append(String.format(Locale.ROOT, "%.3f (95%% CI %.3f–%.3f)", ve[0], ve[1], ve[2]));
        ivs[0] = new double[] {vd[1], vd[2]};
        ivs[1] = new double[] {ve[1], ve[2]};
      } else if (r != null && d != null && e != null) {
        ivs[0] = ratioInterval(r, d);
        ivs[1] = ratioInterval(r, e);
      } else {
        continue;
      }
      for (int k = 0; k < 2; k++) {
        outcome[k] = ivs[k][1] < 1 ? "faster" : ivs[k][0] > 1 ? "slower" : "tie";
      }
      if (outcome[0].equals("faster") && outcome[1].equals("faster")) {
        verdict = "met";
      } else if (outcome[0].equals("slower") || outcome[1].equals("slower")) {
        verdict = "**missed**: " + outcome[0] + " than (d), " + outcome[1] + " than (e)";
      } else {
        verdict = "**not shown**: " + outcome[0] + " vs (d), " + outcome[1] + " vs (e) within the intervals";
      }
      b.append("| ").append(label(c)).append(": faster than (d) and (e) on case 1 | ").append(m).append(" | ")
          .append(verdict).append(" |\n");
    }
    b.append('\n');
    return b.toString();
  }

  /**
   * Goal (issue 34): an idle omnium process costs at most 1 session of its own on the primary (2 with
   * {@code heartbeatWriter=true}) and at most 2 on the replica, at the fleet run's smallest number of
   * processes (per process).
   */
  private String fleetTarget() {
    if (fleet == null) return "";
    StringBuilder b = new StringBuilder();
    for (String[] t : new String[][] {{"OMNIUM", "1", "2", "omnium, a fleet member"},
        {"OMNIUM_WRITER", "2", "2", "omnium with `heartbeatWriter=true`"}}) {
      double[] primary = null;
      double[] replica = null;
      for (String line : fleet.split("\\R")) {
        String[] f = line.trim().split("\\s+");
        // <!-- fleet STACK N server:phase all application own statementsAll statementsOwn -->
        if (f.length < 10 || !f[1].equals("fleet") || !f[2].equals(t[0])) continue;
        int n = Integer.parseInt(f[3]);
        double[] v = {n, Double.parseDouble(f[7]) / n, Double.parseDouble(f[9]) / n};
        if (f[4].equals("primary:idle") && (primary == null || n < primary[0])) primary = v;
        if (f[4].equals("replica:idle") && (replica == null || n < replica[0])) replica = v;
      }
      if (primary == null || replica == null) continue;
      boolean met = primary[1] <= Double.parseDouble(t[1]) && replica[1] <= Double.parseDouble(t[2]);
      b.append("| ").append(t[3]).append(", idle: at most ").append(t[1]).append(" session(s) of its own on ")
          .append("the primary and ").append(t[2]).append(" on the replica, per process | ")
          .append(String.format(Locale.ROOT, "%s on the primary (%.2f statements/s), %s on the replica (%.2f "
              + "statements/s), %d process(es), section 10", Fleet.num(primary[1]), primary[2], Fleet.num(replica[1]), replica[2],
              (int) primary[0]))
          .append(" | ").append(met ? "met" : "**missed**").append(" |\n");
    }
    return b.toString();
  }

  /** Thread counts the Interleaved section measured, in order. */
  private List<Integer> interleavedThreadCounts() {
    List<Integer> out = new ArrayList<>();
    if (interleaved == null) return out;
    for (String line : interleaved.split("\\R")) {
      String t = line.trim();
      if (t.startsWith("<!-- threads ") && t.contains(" REPLICA_POOL ")) {
        out.add(Integer.parseInt(t.split("\\s+")[2]));
      }
    }
    return out;
  }

  /** Goal: read-only transactions at ≥ 0.97 × the limit's throughput, per thread count and mode. */
  private String throughputTargets() {
    StringBuilder b = new StringBuilder();
    List<Integer> counts = interleavedThreadCounts();
    for (String c : new String[] {"OMNIUM_DRIVER", "OMNIUM_DATASOURCE"}) {
      if (counts.isEmpty()) continue;
      StringBuilder m = new StringBuilder();
      int met = 0;
      int missed = 0;
      for (int threads : counts) {
        double[] v = interleavedLine("threads " + threads + " " + c);
        if (v == null) continue;
        if (m.length() > 0) m.append("; ");
        m.append(threads).append(threads == 1 ? " thread " : " threads ").append("**")
            .append(String.format(Locale.ROOT, "%.3f×", v[0])).append("** (95% CI ")
            .append(String.format(Locale.ROOT, "%.3f–%.3f", v[1], v[2])).append(')');
        if (v[1] >= 0.97) met++;
        if (v[2] < 0.97) missed++;
      }
      String verdict = met == counts.size() ? "met" : missed > 0 ? "**missed** at " + missed + " of "
          + counts.size() + " thread counts" : "**not shown** at " + (counts.size() - met) + " of "
          + counts.size() + " thread counts: the interval straddles 0.97";
      b.append("| ").append(label(c)).append(": read-only transaction throughput ≥ 0.97 × (a) at ")
          .append(counts.toString().replaceAll("[\\[\\]]", "").replaceAll(", (\\d+)$", " and $1"))
          .append(" threads (interleaved) | ").append(m).append(" | ").append(verdict)
          .append(" |\n");
    }
    return b.toString();
  }

  /** Goal: ≤ +2 µs client CPU and ≤ +150 B allocated per read-only transaction over the limit. */
  private String overheadTarget() {
    StringBuilder b = new StringBuilder();
    Result a = find("ReadTxBenchmark.readTx", "REPLICA_POOL");
    for (String c : new String[] {"OMNIUM_DRIVER", "OMNIUM_DATASOURCE"}) {
      double[] v = interleavedLine("threads 1 " + c);
      Result r = find("ReadTxBenchmark.readTx", c);
      StringBuilder m = new StringBuilder();
      boolean ok = true;
      boolean known = false;
      // with the CPU overhead's interval: met when all of it is within +2 µs, missed when none is
      String cpuVerdict = null;
      if (v != null && v.length >= 5) {
        m.append("interleaved, 1 thread: ").append(String.format(Locale.ROOT, "%+.2f µs CPU", v[3]));
        if (v.length >= 7) {
          m.append(String.format(Locale.ROOT, " (95%% CI %+.2f…%+.2f)", v[5], v[6]));
          cpuVerdict = v[6] <= 2.0 ? null : v[5] > 2.0 ? "missed" : "straddles";
        } else if (v[3] > 2.0) {
          cpuVerdict = "missed";
        }
        m.append(String.format(Locale.ROOT, ", %+.0f B", v[4]));
        ok = v[4] <= 150;
        known = true;
      }
      if (r != null && a != null && !Double.isNaN(r.alloc) && !Double.isNaN(a.alloc)) {
        if (m.length() > 0) m.append("; ");
        double over = r.alloc - a.alloc;
        m.append("JMH -prof gc: ").append(String.format(Locale.ROOT, "%+.0f B/op", over));
        if (!Double.isNaN(r.cpu) && !Double.isNaN(a.cpu)) {
          m.append(String.format(Locale.ROOT, ", %+.2f µs CPU/op", r.cpu - a.cpu));
        }
        ok = ok && over <= 150;
        known = true;
      }
      if (!known) continue;
      b.append("| ").append(label(c)).append(": overhead per read-only transaction ≤ +2 µs client CPU and ")
          .append("≤ +150 B over (a) | ").append(m).append(" | ")
          .append(!ok || "missed".equals(cpuVerdict) ? "**missed**"
              : cpuVerdict != null ? "**not shown**: the CPU interval straddles +2 µs" : "met")
          .append(" |\n");
    }
    return b.toString();
  }

  /** Goal: a write transaction with readYourWrites=thread ≤ 1.05 × the same with it off. */
  private String readYourWritesTarget() {
    StringBuilder b = new StringBuilder();
    for (String c : new String[] {"OMNIUM_DRIVER", "OMNIUM_DATASOURCE"}) {
      double[] v = interleavedLine("ryw " + c);
      if (v == null) continue;
      String verdict = v[2] <= 1.05 ? "met" : v[1] > 1.05 ? "**missed**"
          : "**not shown**: the interval straddles 1.05";
      b.append("| ").append(label(c)).append(": write transaction with `readYourWrites=thread` ≤ 1.05 × `off` | ")
          .append("interleaved: **").append(String.format(Locale.ROOT, "%.3f×", v[0])).append("** (95% CI ")
          .append(String.format(Locale.ROOT, "%.3f–%.3f", v[1], v[2])).append(") | ").append(verdict)
          .append(" |\n");
    }
    return b.toString();
  }

  /**
   * The README's performance summary, from the same results as docs/performance.md: what was
   * measured, the one command, the targets with their verdicts and the interleaved figures.
   */
  String readmeSummary(Path resultsFile, String roundTrips, String command) {
    StringBuilder b = new StringBuilder();
    b.append("<!-- Generated by dev.omnium.bench.Report from ").append(resultsFile.getFileName())
        .append(" together with docs/performance.md. Re-run benchmarks/run.sh, do not edit. -->\n");
    b.append("Measured with JMH and interleaved paired rounds against real servers (the sandbox's PostgreSQL 18 ")
        .append("primary and streaming replica on the same machine as the client), identical work and pool sizes ")
        .append("for every contender: (a) HikariCP straight to the replica (the limit), (b) omnium in driver mode ")
        .append("under HikariCP, (c) `OmniumDataSource`, (d) pgjdbc multi-host `targetServerType=preferSecondary` ")
        .append("under HikariCP, (e) the AWS Advanced JDBC Wrapper (`srw` plugin) under HikariCP. One command ")
        .append("reproduces every figure and regenerates [docs/performance.md](docs/performance.md) and this ")
        .append("summary:\n\n```sh\n").append(command).append("\n```\n\n");
    b.append(targets(roundTrips).replace("## Targets\n\n", "### Targets\n\n"));
    List<Integer> counts = interleavedThreadCounts();
    if (!counts.isEmpty()) {
      b.append("### Read-only transaction throughput, interleaved, ratio to (a)\n\n| contender |");
      for (int t : counts) b.append(' ').append(t).append(t == 1 ? " thread |" : " threads |");
      b.append("\n|---|");
      for (int ignored : counts) b.append("---:|");
      b.append('\n');
      for (String c : READERS) {
        b.append("| ").append(label(c)).append(" |");
        for (int t : counts) {
          double[] v = interleavedLine("threads " + t + " " + c);
          b.append(' ').append(v == null ? "–" : String.format(Locale.ROOT, "%.3f (%.3f–%.3f)", v[0], v[1], v[2]))
              .append(" |");
        }
        b.append('\n');
      }
      b.append("\nMedian of the per-round throughput ratios (95% bootstrap interval); ≥ 1 is as fast as the ")
          .append("limit. Details, allocation, round trips on the wire and the analysis: ")
          .append("[docs/performance.md](docs/performance.md).\n");
    }
    return b.toString();
  }

  /** Ratio interval from two JMH scores and their 99.9% errors: [(r-e)/(l+e), (r+e)/(l-e)]. */
  private static double[] ratioInterval(Result r, Result l) {
    double re = Double.isFinite(r.error) ? r.error : 0;
    double le = Double.isFinite(l.error) ? l.error : 0;
    double lo = (r.score - re) / (l.score + le);
    double hi = l.score - le <= 0 ? Double.POSITIVE_INFINITY : (r.score + re) / (l.score - le);
    return new double[] {lo, hi};
  }

  /** Numbers from an {@code <!-- key a b c -->} line of the Interleaved section, or null. */
  private double[] interleavedLine(String key) {
    if (interleaved == null) return null;
    for (String line : interleaved.split("\\R")) {
      String t = line.trim();
      if (t.startsWith("<!-- " + key + " ")) {
        String[] parts = t.substring(5 + key.length(), t.length() - 3).trim().split("\\s+");
        double[] v = new double[parts.length];
        for (int i = 0; i < parts.length; i++) v[i] = Double.parseDouble(parts[i]);
        return v;
      }
    }
    return null;
  }

  private String routingTarget() {
    double withClock = 0;
    double logic = 0;
    double alloc = 0;
    boolean allocKnown = false;
    boolean any = false;
    StringBuilder m = new StringBuilder();
    for (String dec : new String[] {"IS_FRESH", "PICK_1_REPLICA", "PICK_2_REPLICAS"}) {
      Result r = find("RoutingDecisionBenchmark.decide", dec);
      Result g = find("RoutingDecisionBenchmark.decideClockGiven", dec);
      if (r == null && g == null) continue;
      any = true;
      if (m.length() > 0) m.append("; ");
      m.append(dec);
      if (r != null) {
        withClock = Math.max(withClock, r.score);
        m.append(' ').append(num(r.score)).append(" ns");
        if (!Double.isNaN(r.alloc)) {
          allocKnown = true;
          alloc = Math.max(alloc, r.alloc);
        }
      }
      if (g != null) {
        logic = Math.max(logic, g.score);
        m.append(" (").append(num(g.score)).append(" ns with the clock reading given)");
        if (!Double.isNaN(g.alloc)) {
          allocKnown = true;
          alloc = Math.max(alloc, g.alloc);
        }
      }
      m.append(", ").append(r != null ? alloc(r) : alloc(g)).append(" B/op");
    }
    if (!any) return "";
    Result clock = find("RoutingDecisionBenchmark.decide", "NANO_TIME");
    String verdict;
    boolean noAlloc = allocKnown && alloc < 0.5;
    if (!allocKnown) {
      verdict = "allocation not measured (run with -prof gc)";
    } else if (withClock > 0 && withClock < 50 && noAlloc) {
      verdict = "met";
    } else if (logic > 0 && logic < 50 && noAlloc) {
      verdict = "**missed** with the clock read" + (clock == null ? "" : " (`System.nanoTime()` alone: "
          + num(clock.score) + " ns on this machine)") + "; met by the decision's own logic";
    } else {
      verdict = noAlloc ? "**missed**" : "**missed** (allocates)";
    }
    return "| routing decision < 50 ns and 0 B/op | " + m + " | " + verdict + " |\n";
  }

  private void table(StringBuilder b, String benchmark, String[] contenders, String limit, String limitName) {
    Result l = find(benchmark, limit);
    String unit = l == null ? "" : unit(l.unit);
    b.append("| contender | ").append(unit).append(" | ± | × ").append(limitName)
        .append(" | client CPU µs/op | alloc B/op |\n");
    b.append("|---|---:|---:|---:|---:|---:|\n");
    for (String c : contenders) {
      Result r = find(benchmark, c);
      b.append("| ").append(label(c)).append(" | ").append(r == null ? "–" : num(r.score)).append(" | ")
          .append(r == null ? "–" : err(r.error)).append(" | ").append(ratio(r, l)).append(" | ").append(cpu(r))
          .append(" | ").append(alloc(r)).append(" |\n");
    }
    b.append('\n');
  }

  private static String label(String contender) {
    try {
      return Contender.valueOf(contender).label();
    } catch (IllegalArgumentException e) {
      return contender;
    }
  }

  private static String unit(String jmhUnit) {
    return jmhUnit.replace("us/op", "µs/op");
  }

  private static String scoreWithError(Result r) {
    if (r == null) return "–";
    return num(r.score) + " ± " + err(r.error);
  }

  private static String ratio(Result r, Result limit) {
    if (r == null || limit == null) return "–";
    return String.format(Locale.ROOT, "%.3f", r.score / limit.score);
  }

  private static String cpu(Result r) {
    if (r == null || Double.isNaN(r.cpu)) return "–";
    return num(r.cpu);
  }

  private static String alloc(Result r) {
    if (r == null || Double.isNaN(r.alloc)) return "–";
    return String.format(Locale.ROOT, "%.0f", r.alloc);
  }

  private static String err(double e) {
    return Double.isFinite(e) ? num(e) : "n/a";
  }

  /** A number that JMH may have written as a string ("NaN") or a JSON number. */
  private static double jmhNumber(Object o) {
    if (o instanceof Number) return ((Number) o).doubleValue();
    if (o instanceof String) {
      try {
        return Double.parseDouble((String) o);
      } catch (NumberFormatException e) {
        return Double.NaN;
      }
    }
    return Double.NaN;
  }

  static String num(double v) {
    if (!Double.isFinite(v)) return "n/a";
    double a = Math.abs(v);
    if (a >= 100) return String.format(Locale.ROOT, "%.1f", v);
    if (a >= 10) return String.format(Locale.ROOT, "%.2f", v);
    return String.format(Locale.ROOT, "%.3f", v);
  }
}
