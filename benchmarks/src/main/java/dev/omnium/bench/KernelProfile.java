package dev.omnium.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Case 1 interleaved once more, the measuring thread recorded by Linux {@code perf} with its
 * {@code cpu-clock} software event. That event is a timer, so it samples the kernel's frames too,
 * also on a virtual machine without hardware counters, where JFR sees only Java code. Each sample is
 * charged to the contender whose block was running at its timestamp ({@code perf -k CLOCK_MONOTONIC}
 * is {@link System#nanoTime()}'s clock), and sorted into kernel, Java and native code by its frames.
 *
 * <p>The recording runs in a child JVM started with {@code -XX:+DumpPerfMapAtExit} (JIT-compiled
 * methods get their names only when it exits); this process then reads the samples with
 * {@code perf script}. Where {@code perf} is missing or refuses, the section says so and nothing
 * fails.
 *
 * <p>With {@code --threads 1,4} the rounds run once per count, each in a recording JVM of its own:
 * at N threads each block is run by N threads at once, each its {@code --block} transactions,
 * every one of them recorded; a sample is charged by its timestamp as at 1 thread.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.KernelProfile [--rounds 300]
 *     [--block 50] [--warm-rounds 40] [--warm-quiet-ms 0] [--threads 1] [--out file.md]</pre>
 */
public final class KernelProfile {
  private static final Contender[] CONTENDERS = {Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
      Contender.OMNIUM_DATASOURCE, Contender.PGJDBC_MULTIHOST};
  private static final int HZ = 2999;
  private static final String WATCHED_READ = "dev.omnium.jdbc.DeadlineSocket$Watched.read(";
  private static final Pattern HEADER = Pattern.compile("^\\s*(\\d+)\\.(\\d+):\\s*$");
  private static final Pattern FRAME = Pattern.compile("^\\s*[0-9a-f]+\\s+(.*?)\\s+\\((.*)\\)\\s*$");
  private static final String[] CATEGORIES = {
      "kernel: timer of a timed poll (hrtimer set and cancelled)",
      "kernel: sleeping in poll and waking up (context switch)",
      "kernel: the rest (socket reads and writes, poll, TCP on loopback)",
      "Java: omnium", "Java: HikariCP", "Java: pgjdbc", "Java: benchmark", "Java: JDK and other",
      "JVM: interpreter, stubs, runtime", "native: libc, JDK libraries, vDSO"};

  private KernelProfile() { }

  public static void main(String[] args) throws Exception {
    int rounds = 300;
    int block = 50;
    int warmRounds = 40;
    int[] threadCounts = {1};
    Path out = null;
    Path record = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds": rounds = Integer.parseInt(args[++i]); break;
        case "--block": block = Integer.parseInt(args[++i]); break;
        case "--warm-rounds": warmRounds = Integer.parseInt(args[++i]); break;
        case "--warm-quiet-ms": Interleaved.warmQuietMillis = Long.parseLong(args[++i]); break;
        case "--threads":
          threadCounts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
          break;
        case "--out": out = Path.of(args[++i]); break;
        case "--record": record = Path.of(args[++i]); break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (record != null) {
      record(record, rounds, block, warmRounds, threadCounts[0]);
      return;
    }
    StringBuilder md = new StringBuilder("### 8d. Where the client's CPU goes, kernel included (perf)\n\n");
    String refused = perfRefusal();
    if (refused != null) {
      md.append("Not recorded in this run: ").append(refused).append(".\n");
    } else {
      md.append(String.format(Locale.ROOT, "Case 1 interleaved again, for each thread count in a JVM of its own, the"
          + " order of the contenders rotating, while Linux `perf record -e cpu-clock -F %d -g` samples every measuring"
          + " thread (a timer event: it sees the kernel's frames too, also on a VM without hardware counters). At N"
          + " threads each block runs N threads at once. Each sample is charged to the contender whose block ran at"
          + " its timestamp, and to where it was: kernel frames (the timer that a poll with a timeout sets and"
          + " cancels; the sleep and wake-up of a poll that waits; the rest of the socket work), Java code by its"
          + " class's library, or the JVM's and native libraries' own code. *µs/tx*: samples × the sampling period ÷"
          + " transactions. Sampling costs kernel time of its own, so the totals are above the unprofiled CPU per"
          + " transaction: read the differences between contenders. The kernel rows move by a few µs from one JVM"
          + " and cluster to the next, (d) included; the Java rows do not.%n%n", HZ));
      for (int threads : threadCounts) md.append(measure(rounds, block, warmRounds, threads));
    }
    System.out.println(md);
    if (out != null) {
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md.toString());
      System.out.println("written to " + out);
    }
  }

  /** Why {@code perf} cannot record the thread here, or null when it can. */
  private static String perfRefusal() {
    try {
      Path probe = Files.createTempFile("omnium-perf-probe", ".data");
      try {
        Process p = new ProcessBuilder("perf", "record", "-q", "-e", "cpu-clock", "-o", probe.toString(),
            "--", "true").redirectErrorStream(true).start();
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
          p.destroyForcibly();
          return "`perf record` did not finish in 60 s";
        }
        return p.exitValue() == 0 ? null : "`perf record` failed: " + said.lines().findFirst().orElse("exit " + p.exitValue());
      } finally {
        Files.deleteIfExists(probe);
      }
    } catch (Exception e) {
      return "no `perf` on this machine (" + e.getMessage() + ")";
    }
  }

  private static String measure(int rounds, int block, int warmRounds, int threads) throws Exception {
    Path dir = Files.createTempDirectory("omnium-kernel-profile");
    try {
      String java = ProcessHandle.current().info().command().orElse("java");
      List<String> cmd = new ArrayList<>(List.of(java));
      cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments()); // the run's heap settings
      cmd.addAll(List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit", "-XX:+PreserveFramePointer",
          "-cp", System.getProperty("java.class.path"), KernelProfile.class.getName(), "--record", dir.toString(),
          "--rounds", Integer.toString(rounds), "--block", Integer.toString(block),
          "--warm-rounds", Integer.toString(warmRounds), "--warm-quiet-ms", Long.toString(Interleaved.warmQuietMillis),
          "--threads", Integer.toString(threads)));
      int rc = new ProcessBuilder(cmd).inheritIO().start().waitFor();
      if (rc != 0) throw new IllegalStateException("the recording JVM failed: exit " + rc);
      long pid = Long.parseLong(Files.readString(dir.resolve("pid")).trim());
      try {
        return report(dir, rounds, block, threads);
      } finally {
        Files.deleteIfExists(Path.of("/tmp/perf-" + pid + ".map"));
      }
    } finally {
      try (var files = Files.list(dir)) {
        for (Path f : (Iterable<Path>) files::iterator) Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    }
  }

  /**
   * The child JVM: the interleaved rounds, recorded. Writes pid, blocks.txt and perf.data into
   * {@code dir}. The blocks run on {@link Interleaved.Crew}, as in the interleaved runner: at N
   * threads each thread runs {@code block} transactions, started together.
   */
  private static void record(Path dir, int rounds, int block, int warmRounds, int threads) throws Exception {
    Files.writeString(dir.resolve("pid"), Long.toString(ProcessHandle.current().pid()));
    int[] ids = Workloads.ids(0x5eed, 4096);
    int n = CONTENDERS.length;
    Interleaved.Crew.Op readTx = (ds, i) -> Workloads.readTx(ds, ids[i & 4095]);
    try (Interleaved.Crew crew = new Interleaved.Crew(threads);
         BenchCluster cluster = BenchCluster.start()) {
      DataSource[] sources = new DataSource[n];
      try {
        for (int k = 0; k < n; k++) {
          sources[k] = CONTENDERS[k].open(cluster);
          Workloads.awaitReadsOn(sources[k], "replica", Duration.ofSeconds(30), CONTENDERS[k].name());
          Workloads.warm(sources[k], Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
        }
        String tids = crew.linuxThreadIds();
        int i = 0;
        JitQuiet jit = new JitQuiet(Interleaved.warmQuietMillis, Interleaved.WARM_LIMIT_MILLIS);
        for (int r = 0; r < warmRounds || !jit.quiet() && !jit.timedOut(); r++) {
          for (int k = 0; k < n; k++, i += threads * block) crew.run(sources[k], block, i, readTx);
        }
        Process perf = new ProcessBuilder("perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-e", "cpu-clock",
            "-F", Integer.toString(HZ), "-g", "-t", tids, "-o", dir.resolve("perf.data").toString())
            .inheritIO().start();
        Thread.sleep(500); // perf attaches
        StringBuilder blocks = new StringBuilder();
        for (int r = 0; r < rounds; r++) {
          for (int q = 0; q < n; q++) {
            int k = (q + r) % n;
            long t0 = System.nanoTime();
            crew.run(sources[k], block, i, readTx);
            i += threads * block;
            blocks.append(k).append(' ').append(t0).append(' ').append(System.nanoTime()).append('\n');
          }
        }
        new ProcessBuilder("kill", "-INT", Long.toString(perf.pid())).start().waitFor();
        if (!perf.waitFor(120, TimeUnit.SECONDS)) {
          perf.destroyForcibly();
          throw new IllegalStateException("perf record did not stop");
        }
        Files.writeString(dir.resolve("blocks.txt"), blocks);
      } finally {
        for (DataSource ds : sources) {
          if (ds != null) Contender.close(ds);
        }
      }
    }
  }

  /** Reads the samples with {@code perf script} and charges them to contenders and categories. */
  private static String report(Path dir, int rounds, int block, int threads) throws Exception {
    List<long[]> blocks = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve("blocks.txt"))) {
      String[] f = line.split(" ");
      blocks.add(new long[] {Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[0])});
    }
    blocks.sort(Comparator.comparingLong(b -> b[0]));
    long[] starts = blocks.stream().mapToLong(b -> b[0]).toArray();
    int n = CONTENDERS.length;
    long[][] byCategory = new long[n][CATEGORIES.length];
    List<Map<String, Long>> byStack = new ArrayList<>();
    for (int k = 0; k < n; k++) byStack.add(new HashMap<>());
    Process script = new ProcessBuilder("perf", "script", "-i", dir.resolve("perf.data").toString(),
        "-F", "time,ip,sym,dso").redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(script.getInputStream(), StandardCharsets.UTF_8))) {
      long time = -1;
      List<String[]> frames = new ArrayList<>();
      String line;
      while (true) {
        line = r.readLine();
        Matcher h = line == null ? null : HEADER.matcher(line);
        if (line == null || h.matches()) {
          int k = contenderAt(time, starts, blocks);
          if (k >= 0 && !frames.isEmpty()) {
            byCategory[k][category(frames)]++;
            byStack.get(k).merge(signature(frames), 1L, Long::sum);
          }
          if (line == null) break;
          time = Long.parseLong(h.group(1)) * 1_000_000_000L + Long.parseLong((h.group(2) + "000000000").substring(0, 9));
          frames.clear();
          continue;
        }
        Matcher f = FRAME.matcher(line);
        if (f.matches()) frames.add(new String[] {f.group(1), f.group(2)});
      }
    }
    if (script.waitFor() != 0) throw new IllegalStateException("perf script failed: exit " + script.exitValue());
    double ops = (double) rounds * block * threads;
    double usPerSample = 1e6 / HZ;
    StringBuilder b = new StringBuilder();
    b.append(threads == 1 ? "#### 1 thread\n\n" : "#### " + threads + " threads\n\n");
    b.append(String.format(Locale.ROOT, "%d rounds of %d read-only transactions per contender and thread.%n%n",
        rounds, block));
    b.append("| where |");
    for (Contender c : CONTENDERS) b.append(' ').append(c.label()).append(" µs/tx |");
    for (int k = 1; k < n; k++) b.append(' ').append(tag(CONTENDERS[k])).append(" over (a) |");
    b.append("\n|---|");
    for (int k = 0; k < 2 * n - 1; k++) b.append("---:|");
    b.append('\n');
    for (int c = 0; c <= CATEGORIES.length; c++) {
      boolean total = c == CATEGORIES.length;
      b.append("| ").append(total ? "**all samples**" : CATEGORIES[c]).append(" |");
      double[] v = new double[n];
      for (int k = 0; k < n; k++) {
        long samples = total ? Arrays.stream(byCategory[k]).sum() : byCategory[k][c];
        v[k] = samples * usPerSample / ops;
        b.append(String.format(Locale.ROOT, total ? " **%.2f** |" : " %.2f |", v[k]));
      }
      for (int k = 1; k < n; k++) b.append(String.format(Locale.ROOT, total ? " **%+.2f** |" : " %+.2f |", v[k] - v[0]));
      b.append('\n');
    }
    b.append('\n');
    for (int k = 1; k < 3; k++) {
      b.append("Largest differences of ").append(CONTENDERS[k].label()).append(" from (a), by the sampled frame and its"
          + " three callers (µs/tx):\n\n");
      Map<String, Long> mine = byStack.get(k);
      Map<String, Long> base = byStack.get(0);
      Set<String> stacks = new HashSet<>(mine.keySet());
      stacks.addAll(base.keySet());
      Map<String, Double> diff = new HashMap<>();
      for (String s : stacks) {
        diff.put(s, (mine.getOrDefault(s, 0L) - base.getOrDefault(s, 0L)) * usPerSample / ops);
      }
      diff.entrySet().stream().sorted((x, y) -> Double.compare(Math.abs(y.getValue()), Math.abs(x.getValue())))
          .limit(6).forEach(e -> b.append(String.format(Locale.ROOT, "- %+.2f: `%s`%n", e.getValue(), e.getKey())));
      b.append('\n');
    }
    return b.toString();
  }

  private static String tag(Contender c) {
    return c.label().substring(0, 3);
  }

  static int contenderAt(long time, long[] starts, List<long[]> blocks) {
    if (time < 0) return -1;
    int i = Arrays.binarySearch(starts, time);
    if (i < 0) i = -i - 2;
    if (i < 0 || time > blocks.get(i)[1]) return -1;
    return (int) blocks.get(i)[2];
  }

  /** The category of one sample, from its frames (leaf first). */
  static int category(List<String[]> frames) {
    String[] leaf = frames.get(0);
    if (leaf[1].contains("kernel")) {
      for (String[] f : frames) {
        if (!f[1].contains("kernel")) break;
        String sym = f[0];
        if (sym.equals("__schedule") || sym.equals("schedule") || sym.startsWith("finish_task_switch")) return 1;
        if (sym.contains("hrtimer")) return 0;
      }
      return 2;
    }
    String sym = leaf[0];
    if (leaf[1].startsWith("/tmp/perf-") && sym.contains("(")) {
      String method = sym.substring(0, sym.indexOf('('));
      method = method.substring(method.lastIndexOf(' ') + 1);
      if (method.indexOf('.') < 0) return 8; // a stub such as "StubRoutines (1)"
      if (method.startsWith("dev.omnium.jdbc.")) return 3;
      if (method.startsWith("com.zaxxer.hikari.")) return 4;
      if (method.startsWith("org.postgresql.")) return 5;
      if (method.startsWith("dev.omnium.bench.")) return 6;
      return 7;
    }
    if (leaf[1].contains("libjvm") || leaf[1].startsWith("/tmp/perf-")) return 8;
    return 9;
  }

  /**
   * The sampled frame and its three callers, as one string. omnium's {@code DeadlineSocket} read
   * is left out as a caller: it only marks the time of a read, so the socket work under it and the
   * same work under pgjdbc alone get the same signature and the lists show what differs.
   */
  static String signature(List<String[]> frames) {
    StringBuilder s = new StringBuilder();
    int n = 0;
    for (int i = 0; i < frames.size() && n < 4; i++) {
      String sym = frames.get(i)[0];
      if (i > 0 && sym.contains(WATCHED_READ)) continue;
      if (n++ > 0) s.append(" ← ");
      s.append(sym.length() > 90 ? sym.substring(0, 90) + "…" : sym);
    }
    return s.toString();
  }
}
