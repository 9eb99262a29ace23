package dev.omnium.bench;

import com.sun.management.ThreadMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;

/**
 * Case 1 with the contenders interleaved, which JMH cannot do: one cluster, all five data sources
 * open at once, and rounds in which every contender runs a short block of read-only transactions,
 * in a rotating order. Each contender's block is compared with the limit's block of the same round
 * (seconds apart), so load that drifts over the run (other processes on a shared machine) cancels
 * out of the ratios. Reports per contender the median block time and the median of its per-round
 * ratios to (a) with a bootstrap 95% confidence interval of that median.
 *
 * <p>With {@code --threads 1,4,16,64} the same is repeated at each thread count: a block is then
 * {@code max(block, 5 × threads)} transactions spread over that many threads started together;
 * the ratio is the contender's throughput over (a)'s in the same round. Client CPU and allocation
 * per transaction are those of the measuring threads (pool housekeeping threads not included).
 *
 * <p>With {@code --ryw-rounds N}, write transactions (case 2) through omnium with
 * {@code readYourWrites=thread} against the same with it {@code off}, interleaved the same way,
 * in driver mode and in DataSource mode.
 *
 * <p>With {@code --forks N} the rounds are split over N JVMs run one after the other, each with its
 * own cluster and warm-up, as JMH's forks: one JVM's compilation and one cluster's state move every
 * round of a run alike, which rounds within one JVM cannot average out. The intervals then resample
 * forks, then rounds within each.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.Interleaved [--rounds 40] [--block 200]
 *     [--warm-rounds 8] [--warm-quiet-ms 0] [--threads 1,4,16,64] [--ryw-rounds 0] [--ryw-only] [--forks 1] [--out file.md]</pre>
 *
 * <p>{@code --ryw-only} skips the read-only rounds (a quick check of the write pair alone).
 *
 * <p>With {@code --warm-quiet-ms N} each warm-up goes on after its rounds until the JIT has compiled
 * nothing for N ms ({@link JitQuiet}): rounds measured while C2 still compiles charge the contender
 * with the most code for the compiler's work.
 */
public final class Interleaved {
  private static final Contender[] CONTENDERS = {Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
      Contender.OMNIUM_DATASOURCE, Contender.PGJDBC_MULTIHOST, Contender.AWS_WRAPPER_SRW};
  private static final Contender[] OMNIUM = {Contender.OMNIUM_DRIVER, Contender.OMNIUM_DATASOURCE};
  private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** One measured block: wall time, and CPU and allocation of the measuring threads. */
  record Block(long wallNanos, long cpuNanos, long allocatedBytes, int ops) { }

  /** Threads that run one block together, started at once, reused for every block. */
  static final class Crew implements AutoCloseable {
    final int threads;
    private final ExecutorService pool;

    Crew(int threads) {
      this.threads = threads;
      this.pool = Executors.newFixedThreadPool(threads, r -> {
        Thread t = new Thread(r, "interleaved-" + threads);
        t.setDaemon(true);
        return t;
      });
    }

    @FunctionalInterface
    interface Op {
      void run(DataSource ds, int i) throws SQLException;
    }

    Block run(DataSource ds, int perThread, int base, Op op) throws Exception {
      if (threads == 1) return measure(ds, perThread, base, op);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<long[]>> parts = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int from = base + t * perThread;
        parts.add(pool.submit(() -> {
          go.await();
          Block b = measure(ds, perThread, from, op);
          return new long[] {b.cpuNanos(), b.allocatedBytes()};
        }));
      }
      long t0 = System.nanoTime();
      go.countDown();
      long cpu = 0;
      long alloc = 0;
      for (Future<long[]> f : parts) {
        long[] r = f.get();
        cpu += r[0];
        alloc += r[1];
      }
      return new Block(System.nanoTime() - t0, cpu, alloc, threads * perThread);
    }

    private static Block measure(DataSource ds, int ops, int from, Op op) throws SQLException {
      long id = Thread.currentThread().getId();
      long cpu0 = THREADS.getCurrentThreadCpuTime();
      long alloc0 = THREADS.getThreadAllocatedBytes(id);
      long t0 = System.nanoTime();
      for (int i = 0; i < ops; i++) op.run(ds, from + i);
      long t1 = System.nanoTime();
      return new Block(t1 - t0, THREADS.getCurrentThreadCpuTime() - cpu0,
          THREADS.getThreadAllocatedBytes(id) - alloc0, ops);
    }

    /**
     * The Linux ids of the threads that run this crew's blocks, comma-separated as
     * {@code perf record -t} takes them: the caller's own at 1 thread (see {@link #run}).
     */
    String linuxThreadIds() throws Exception {
      if (threads == 1) return linuxThreadId();
      CountDownLatch all = new CountDownLatch(threads); // holds each task until every thread has one
      List<Future<String>> ids = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        ids.add(pool.submit(() -> {
          all.countDown();
          all.await();
          return linuxThreadId();
        }));
      }
      List<String> out = new ArrayList<>();
      for (Future<String> f : ids) out.add(f.get());
      return String.join(",", out);
    }

    private static String linuxThreadId() throws IOException {
      return Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
    }

    @Override
    public void close() {
      pool.shutdownNow();
    }
  }

  /** Per contender and measured round: µs per op (wall), CPU µs per op, bytes per op. */
  static final class Series {
    final double[] micros;
    final double[] cpu;
    final double[] alloc;
    /** The fork (JVM and cluster) each round ran in: rounds of one fork share its state. */
    final int[] fork;

    Series(int rounds) {
      micros = new double[rounds];
      cpu = new double[rounds];
      alloc = new double[rounds];
      fork = new int[rounds];
    }

    /** The rounds of every fork, one after the other. */
    static Series concat(List<Series> parts) {
      int n = 0;
      for (Series p : parts) n += p.micros.length;
      Series all = new Series(n);
      int at = 0;
      for (int f = 0; f < parts.size(); f++) {
        Series p = parts.get(f);
        int len = p.micros.length;
        System.arraycopy(p.micros, 0, all.micros, at, len);
        System.arraycopy(p.cpu, 0, all.cpu, at, len);
        System.arraycopy(p.alloc, 0, all.alloc, at, len);
        Arrays.fill(all.fork, at, at + len, f);
        at += len;
      }
      return all;
    }

    void put(int round, Block b) {
      micros[round] = b.wallNanos() / 1000.0 / b.ops();
      cpu[round] = b.cpuNanos() / 1000.0 / b.ops();
      alloc[round] = b.allocatedBytes() / (double) b.ops();
    }
  }

  public static void main(String[] args) throws Exception {
    int rounds = 40;
    int block = 200;
    int warmRounds = 8;
    int rywRounds = 0;
    int forks = 1;
    int[] threadCounts = {1};
    Path out = null;
    Path raw = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds": rounds = Integer.parseInt(args[++i]); break;
        case "--block": block = Integer.parseInt(args[++i]); break;
        case "--warm-rounds": warmRounds = Integer.parseInt(args[++i]); break;
        case "--warm-quiet-ms": warmQuietMillis = Long.parseLong(args[++i]); break;
        case "--ryw-rounds": rywRounds = Integer.parseInt(args[++i]); break;
        case "--forks": forks = Integer.parseInt(args[++i]); break;
        case "--threads":
          threadCounts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
          break;
        case "--out": out = Path.of(args[++i]); break;
        case "--raw": raw = Path.of(args[++i]); break;
        case "--ryw-only": threadCounts = new int[0]; break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (forks < 1) throw new IllegalArgumentException("--forks must be at least 1: " + forks);
    Map<String, Map<String, Series>> sections = forks > 1
        ? forked(args, forks, rounds, rywRounds)
        : measure(rounds, block, warmRounds, rywRounds, threadCounts);
    if (raw != null) { // a fork of a parent run: the rounds themselves, for the parent to merge
      writeRaw(raw, sections);
      return;
    }
    StringBuilder md = new StringBuilder();
    for (Map.Entry<String, Map<String, Series>> e : sections.entrySet()) {
      if (e.getKey().equals("ryw")) {
        md.append(readYourWritesMarkdown(block, warmRounds, forks, e.getValue()));
        continue;
      }
      int threads = Integer.parseInt(e.getKey().substring("threads ".length()));
      Map<Contender, Series> series = new EnumMap<>(Contender.class);
      e.getValue().forEach((k, v) -> series.put(Contender.valueOf(k), v));
      int perThread = Math.max(5, (int) Math.ceil(block / (double) threads));
      if (threads == 1) md.append(markdown(block, warmRounds, forks, series));
      md.append(threadsMarkdown(threads, perThread, forks, series));
    }
    System.out.println(md);
    if (out != null) {
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md);
      System.out.println("written to " + out);
    }
  }

  /** Measures in this JVM: per section ("threads N", "ryw"), each contender's rounds. */
  private static Map<String, Map<String, Series>> measure(int rounds, int block, int warmRounds,
      int rywRounds, int[] threadCounts) throws Exception {
    Map<String, Map<String, Series>> sections = new LinkedHashMap<>();
    int[] ids = Workloads.ids(0x5eed, 4096);
    try (BenchCluster cluster = BenchCluster.start()) {
      Map<Contender, DataSource> sources = new EnumMap<>(Contender.class);
      try {
        for (int k = 0; k < CONTENDERS.length && threadCounts.length > 0; k++) {
          Contender c = CONTENDERS[k];
          DataSource ds = c.open(cluster);
          sources.put(c, ds);
          Workloads.awaitReadsOn(ds, "replica", Duration.ofSeconds(30), c.name());
          Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
        }
        for (int threads : threadCounts) {
          int perThread = Math.max(5, (int) Math.ceil(block / (double) threads));
          Map<Contender, Series> series = interleave(CONTENDERS, sources, rounds, warmRounds, threads,
              perThread, (ds, i) -> Workloads.readTx(ds, ids[i & 4095]));
          Map<String, Series> byName = new LinkedHashMap<>();
          series.forEach((c, v) -> byName.put(c.name(), v));
          sections.put("threads " + threads, byName);
          System.out.println("[interleaved] " + threads + " thread(s) done");
        }
      } finally {
        for (DataSource ds : sources.values()) Contender.close(ds);
      }
      if (rywRounds > 0) sections.put("ryw", readYourWrites(cluster, rywRounds, warmRounds, block));
    }
    return sections;
  }

  /**
   * Splits the rounds over {@code forks} JVMs run one after the other, each with its own cluster
   * and warm-up (as JMH's forks: what one JVM's compilation or one cluster's state does to the
   * figures spreads over the forks instead of biasing all rounds), and merges their rounds.
   */
  private static Map<String, Map<String, Series>> forked(String[] args, int forks, int rounds,
      int rywRounds) throws Exception {
    List<Map<String, Map<String, Series>>> parts = new ArrayList<>();
    Path dir = Files.createTempDirectory("omnium-interleaved");
    String java = ProcessHandle.current().info().command().orElse("java");
    for (int f = 0; f < forks; f++) {
      Path raw = dir.resolve("fork-" + f + ".txt");
      List<String> cmd = new ArrayList<>();
      cmd.add(java);
      cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
      cmd.add("-cp");
      cmd.add(System.getProperty("java.class.path"));
      cmd.add(Interleaved.class.getName());
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          // given below, per fork (defaults included), or the parent's alone
          case "--forks": case "--out": case "--raw": case "--rounds": case "--ryw-rounds": i++; break;
          default: cmd.add(args[i]);
        }
      }
      cmd.addAll(List.of("--rounds", Integer.toString(share(rounds, forks, f)),
          "--ryw-rounds", Integer.toString(share(rywRounds, forks, f)), "--raw", raw.toString()));
      System.out.println("[interleaved] fork " + (f + 1) + " of " + forks);
      int rc = new ProcessBuilder(cmd).inheritIO().start().waitFor();
      if (rc != 0) throw new IllegalStateException("interleaved fork " + (f + 1) + " failed: exit " + rc);
      parts.add(readRaw(raw));
      Files.delete(raw);
    }
    Files.delete(dir);
    Map<String, Map<String, Series>> merged = new LinkedHashMap<>();
    for (String section : parts.get(0).keySet()) {
      Map<String, Series> keys = new LinkedHashMap<>();
      for (String key : parts.get(0).get(section).keySet()) {
        List<Series> ofKey = new ArrayList<>();
        for (Map<String, Map<String, Series>> p : parts) ofKey.add(p.get(section).get(key));
        keys.put(key, Series.concat(ofKey));
      }
      merged.put(section, keys);
    }
    return merged;
  }

  /** Fork {@code f}'s share of {@code total} rounds: as equal as whole rounds allow. */
  static int share(int total, int forks, int f) {
    return total / forks + (f < total % forks ? 1 : 0);
  }

  private static void writeRaw(Path file, Map<String, Map<String, Series>> sections) throws Exception {
    StringBuilder b = new StringBuilder();
    sections.forEach((section, keys) -> keys.forEach((key, s) -> {
      for (int r = 0; r < s.micros.length; r++) {
        b.append(section.replace(' ', '|')).append(' ').append(key.replace(' ', '|')).append(' ')
            .append(s.micros[r]).append(' ').append(s.cpu[r]).append(' ').append(s.alloc[r]).append('\n');
      }
    }));
    Files.writeString(file, b);
  }

  private static Map<String, Map<String, Series>> readRaw(Path file) throws Exception {
    Map<String, Map<String, List<double[]>>> rows = new LinkedHashMap<>();
    for (String line : Files.readAllLines(file)) {
      String[] f = line.split(" ");
      rows.computeIfAbsent(f[0].replace('|', ' '), k -> new LinkedHashMap<>())
          .computeIfAbsent(f[1].replace('|', ' '), k -> new ArrayList<>())
          .add(new double[] {Double.parseDouble(f[2]), Double.parseDouble(f[3]), Double.parseDouble(f[4])});
    }
    Map<String, Map<String, Series>> out = new LinkedHashMap<>();
    rows.forEach((section, keys) -> {
      Map<String, Series> m = new LinkedHashMap<>();
      keys.forEach((key, list) -> {
        Series s = new Series(list.size());
        for (int r = 0; r < list.size(); r++) {
          s.micros[r] = list.get(r)[0];
          s.cpu[r] = list.get(r)[1];
          s.alloc[r] = list.get(r)[2];
        }
        m.put(key, s);
      });
      out.put(section, m);
    });
    return out;
  }

  /** How long the JIT must have compiled nothing before measured rounds begin; 0: no such rule. */
  static long warmQuietMillis;
  /** The warm-up gives up waiting for a quiet JIT after this long. */
  static final long WARM_LIMIT_MILLIS = 120_000;

  /**
   * Runs {@code rounds} measured rounds of every contender in rotating order, after at least
   * {@code warmRounds} warm-up rounds, continued until the JIT is quiet ({@link #warmQuietMillis}).
   */
  static <K> Map<K, Series> interleave(K[] order, Map<K, DataSource> sources, int rounds, int warmRounds,
                                       int threads, int perThread, Crew.Op op) throws Exception {
    Map<K, Series> series = new LinkedHashMap<>();
    for (K k : order) series.put(k, new Series(rounds));
    int next = 0;
    int round = 0;
    try (Crew crew = new Crew(threads)) {
      JitQuiet jit = new JitQuiet(warmQuietMillis, WARM_LIMIT_MILLIS);
      while (round < warmRounds || !jit.quiet() && !jit.timedOut()) {
        next = round(order, sources, crew, round++, next, perThread, op, null, 0);
      }
      if (warmQuietMillis > 0) {
        System.out.printf(Locale.ROOT, "[interleaved] warm-up: %d rounds, %.1f s%s%n", round, jit.seconds(),
            jit.quiet() ? "" : ", the JIT still compiling");
      }
      for (int measured = 0; measured < rounds; measured++) {
        next = round(order, sources, crew, round++, next, perThread, op, series, measured);
      }
    }
    return series;
  }

  /** One round: every contender's block, in the order rotated by {@code round}; recorded when {@code series}. */
  private static <K> int round(K[] order, Map<K, DataSource> sources, Crew crew, int round, int next, int perThread,
                               Crew.Op op, Map<K, Series> series, int measured) throws Exception {
    for (int k = 0; k < order.length; k++) {
      K c = order[Math.floorMod(round + k, order.length)]; // rotate who goes first
      Block b = crew.run(sources.get(c), perThread, next, op);
      next += crew.threads * perThread;
      if (series != null) series.get(c).put(measured, b);
    }
    return next;
  }

  /** The warm-up's rule beyond its rounds, for the tables' text. */
  static String warmRule() {
    return warmQuietMillis <= 0 ? ""
        : ", continued until the JIT had compiled nothing for " + warmQuietMillis + " ms";
  }

  /** The machine's halt polling while this ran (benchmarks/halt-poll.sh), for the tables' text. */
  static String haltPolling() {
    try {
      long ns = Long.parseLong(Files.readString(
          Path.of("/sys/module/haltpoll/parameters/guest_halt_poll_ns")).trim());
      return ns == 0 ? " An idle vCPU halted at once (`guest_halt_poll_ns` 0)."
          : " An idle vCPU polled for up to " + ns / 1000 + " µs before it halted (`guest_halt_poll_ns`).";
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  private static String markdown(int block, int warmRounds, int forks, Map<Contender, Series> series) {
    int rounds = series.get(Contender.REPLICA_POOL).micros.length;
    StringBuilder b = new StringBuilder();
    b.append("### Case 1 interleaved (paired rounds)\n\n");
    b.append(forks > 1
            ? "In each of " + forks + " forks (a JVM and a cluster of its own, run one after the other) the five "
                + "data sources open side by side; " + rounds + " rounds in all (after " + warmRounds
                + " warm-up rounds in each fork" + warmRule() + ")"
            : "One cluster, the five data sources open side by side; " + rounds + " rounds (after " + warmRounds
                + " warm-up rounds" + warmRule() + ")")
        .append(" in which each contender runs ").append(block)
        .append(" Spring-shaped read-only transactions in turn, the order rotating every round. Ratios are paired: ")
        .append("each block against (a)'s block of the same round, seconds apart, so load that drifts over the run ")
        .append("cancels out. *95% CI*: bootstrap confidence interval of the median ratio")
        .append(forks > 1 ? " (forks resampled, then rounds within each)" : "")
        .append(". Client CPU and allocation: the measuring thread's, per transaction. (c) connects as a role of ")
        .append("its own: omnium caps the pooled sessions of a process per server, database and user, and two ")
        .append("omnium data sources of one user in one JVM would share that cap (docs/operations.md, sizing).")
        .append(haltPolling()).append("\n\n");
    b.append("| contender | median µs/op | p25–p75 µs/op | median client CPU µs/op | median client B/op ")
        .append("| median ratio to (a) | 95% CI of the median ratio |\n");
    b.append("|---|---:|---:|---:|---:|---:|---:|\n");
    double[] limit = series.get(Contender.REPLICA_POOL).micros;
    for (Contender c : CONTENDERS) {
      Series s = series.get(c);
      double[] t = s.micros;
      double[] ratios = new double[rounds];
      for (int r = 0; r < rounds; r++) ratios[r] = t[r] / limit[r];
      double[] ci = bootstrapMedianCi(ratios, s.fork, 0x0b5e55edL);
      b.append("| ").append(c.label()).append(" | ").append(f(median(t))).append(" | ")
          .append(f(percentile(t, 25))).append("–").append(f(percentile(t, 75))).append(" | ")
          .append(f(median(s.cpu))).append(" | ").append(String.format(Locale.ROOT, "%.0f", median(s.alloc)))
          .append(" | ").append(String.format(Locale.ROOT, "%.3f", median(ratios))).append(" | ")
          .append(String.format(Locale.ROOT, "%.3f–%.3f", ci[0], ci[1])).append(" |\n");
      // machine-readable lines for the report's verdicts
      b.append("<!-- interleaved ").append(c.name()).append(' ')
          .append(String.format(Locale.ROOT, "%.5f %.5f %.5f", median(ratios), ci[0], ci[1])).append(" -->\n");
    }
    b.append('\n');
    // pairwise against (d) and (e): omnium faster?
    b.append("| pair (same rounds) | median ratio | 95% CI |\n|---|---:|---:|\n");
    for (Contender o : OMNIUM) {
      for (Contender p : new Contender[] {Contender.PGJDBC_MULTIHOST, Contender.AWS_WRAPPER_SRW}) {
        double[] ratios = new double[rounds];
        for (int r = 0; r < rounds; r++) ratios[r] = series.get(o).micros[r] / series.get(p).micros[r];
        double[] ci = bootstrapMedianCi(ratios, series.get(o).fork, 0x5eedL);
        b.append("| ").append(o.label()).append(" ÷ ").append(p.label()).append(" | ")
            .append(String.format(Locale.ROOT, "%.3f", median(ratios))).append(" | ")
            .append(String.format(Locale.ROOT, "%.3f–%.3f", ci[0], ci[1])).append(" |\n");
        b.append("<!-- pair ").append(o.name()).append(' ').append(p.name()).append(' ')
            .append(String.format(Locale.ROOT, "%.5f %.5f %.5f", median(ratios), ci[0], ci[1])).append(" -->\n");
      }
    }
    b.append('\n');
    return b.toString();
  }

  /**
   * Throughput at one thread count, as a ratio to (a) per round, plus the overhead over (a) in
   * client CPU and allocation per transaction (medians of the per-round differences).
   */
  private static String threadsMarkdown(int threads, int perThread, int forks, Map<Contender, Series> series) {
    int rounds = series.get(Contender.REPLICA_POOL).micros.length;
    StringBuilder b = new StringBuilder();
    b.append("### Case 1 interleaved at ").append(threads).append(threads == 1 ? " thread" : " threads")
        .append(": throughput ratio to (a)\n\n");
    b.append(rounds).append(" paired rounds").append(forks > 1 ? " over " + forks + " forks" : "")
        .append("; each block ").append(threads).append(" × ").append(perThread)
        .append(" read-only transactions started together. *Throughput ratio*: the contender's transactions per ")
        .append("second over (a)'s in the same round (≥ 1 is as fast as the limit). *Overhead*: per-round ")
        .append("difference to (a) in client CPU and allocation per transaction, median (CPU: with its 95% CI).\n\n");
    b.append("| contender | median ops/s | median throughput ratio to (a) | 95% CI | client CPU µs/op ")
        .append("| overhead CPU µs/op | client B/op | overhead B/op |\n");
    b.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    Series limit = series.get(Contender.REPLICA_POOL);
    for (Contender c : CONTENDERS) {
      Series s = series.get(c);
      double[] ratios = new double[rounds];
      double[] cpuOver = new double[rounds];
      double[] allocOver = new double[rounds];
      double[] opsPerSecond = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        ratios[r] = limit.micros[r] / s.micros[r];
        cpuOver[r] = s.cpu[r] - limit.cpu[r];
        allocOver[r] = s.alloc[r] - limit.alloc[r];
        opsPerSecond[r] = 1e6 / s.micros[r];
      }
      double[] ci = bootstrapMedianCi(ratios, s.fork, 0x7412L + threads);
      double[] cpuCi = bootstrapMedianCi(cpuOver, s.fork, 0xc0L + threads);
      b.append("| ").append(c.label()).append(" | ").append(String.format(Locale.ROOT, "%.0f", median(opsPerSecond)))
          .append(" | ").append(String.format(Locale.ROOT, "%.3f", median(ratios))).append(" | ")
          .append(String.format(Locale.ROOT, "%.3f–%.3f", ci[0], ci[1])).append(" | ")
          .append(f(median(s.cpu))).append(" | ").append(String.format(Locale.ROOT, "%+.2f (%+.2f…%+.2f)",
              median(cpuOver), cpuCi[0], cpuCi[1]))
          .append(" | ").append(String.format(Locale.ROOT, "%.0f", median(s.alloc))).append(" | ")
          .append(String.format(Locale.ROOT, "%+.0f", median(allocOver))).append(" |\n");
      b.append("<!-- threads ").append(threads).append(' ').append(c.name()).append(' ')
          .append(String.format(Locale.ROOT, "%.5f %.5f %.5f %.4f %.1f %.4f %.4f", median(ratios), ci[0], ci[1],
              median(cpuOver), median(allocOver), cpuCi[0], cpuCi[1])).append(" -->\n");
    }
    b.append('\n');
    return b.toString();
  }

  /** Write transactions with readYourWrites=thread against off, driver mode and DataSource mode. */
  private static Map<String, Series> readYourWrites(BenchCluster cluster, int rounds, int warmRounds, int block)
      throws Exception {
    String[] keys = {"OMNIUM_DRIVER off", "OMNIUM_DRIVER thread", "OMNIUM_DATASOURCE off", "OMNIUM_DATASOURCE thread"};
    Map<String, DataSource> sources = new LinkedHashMap<>();
    Map<String, Series> series;
    try {
      for (String k : keys) {
        String[] parts = k.split(" ");
        DataSource ds = Contender.valueOf(parts[0]).open(cluster, cluster.primary().hostPort(),
            cluster.replica().hostPort(), "&readYourWrites=" + parts[1] + "&readYourWritesTtl=60s");
        sources.put(k, ds);
        Workloads.warmWrites(ds, Contender.POOL_SIZE);
      }
      series = interleave(keys, sources, rounds, warmRounds, 1, Math.max(5, block / 4),
          (ds, i) -> Workloads.writeTx(ds, i));
    } finally {
      for (DataSource ds : sources.values()) Contender.close(ds);
    }
    return series;
  }

  private static String readYourWritesMarkdown(int block, int warmRounds, int forks, Map<String, Series> series) {
    int rounds = series.values().iterator().next().micros.length;
    StringBuilder b = new StringBuilder();
    b.append("### Write transaction with readYourWrites=thread, interleaved\n\n");
    b.append(rounds).append(" paired rounds").append(forks > 1 ? " over " + forks + " forks" : "")
        .append(" of ").append(Math.max(5, block / 4))
        .append(" write transactions (case 2), 1 thread: omnium with `readYourWrites=thread` against the same ")
        .append("with it `off`, same round. A commit is remembered by a clock reading and asks for nothing more; no read follows here, so the sampler runs on its schedule only.\n\n");
    b.append("| mode | median µs/op `off` | median µs/op `thread` | median ratio thread ÷ off | 95% CI |\n");
    b.append("|---|---:|---:|---:|---:|\n");
    for (Contender c : OMNIUM) {
      Series off = series.get(c.name() + " off");
      Series on = series.get(c.name() + " thread");
      double[] ratios = new double[rounds];
      for (int r = 0; r < rounds; r++) ratios[r] = on.micros[r] / off.micros[r];
      double[] ci = bootstrapMedianCi(ratios, on.fork, 0x9e11L);
      b.append("| ").append(c.label()).append(" | ").append(f(median(off.micros))).append(" | ")
          .append(f(median(on.micros))).append(" | ").append(String.format(Locale.ROOT, "%.3f", median(ratios)))
          .append(" | ").append(String.format(Locale.ROOT, "%.3f–%.3f", ci[0], ci[1])).append(" |\n");
      b.append("<!-- ryw ").append(c.name()).append(' ')
          .append(String.format(Locale.ROOT, "%.5f %.5f %.5f", median(ratios), ci[0], ci[1])).append(" -->\n");
    }
    b.append('\n');
    return b.toString();
  }

  /**
   * Bootstrap 95% interval of the median of {@code values}. With several forks (rounds of one fork
   * share its JVM and cluster, so they are not independent of each other) each resample draws
   * forks first, then rounds within each drawn fork; with one fork, rounds.
   */
  static double[] bootstrapMedianCi(double[] values, int[] fork, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int n = values.length;
    int forks = 0;
    for (int f : fork) forks = Math.max(forks, f + 1);
    int[] from = new int[forks + 1]; // fork f's rounds: [from[f], from[f + 1]) (concatenated in order)
    int longest = 0;
    for (int f : fork) from[f + 1]++;
    for (int f = 0; f < forks; f++) {
      longest = Math.max(longest, from[f + 1]);
      from[f + 1] += from[f];
    }
    double[] medians = new double[2000];
    double[] sample = new double[Math.max(n, forks * longest)];
    for (int i = 0; i < medians.length; i++) {
      int len = 0;
      if (forks <= 1) {
        while (len < n) sample[len++] = values[rnd.nextInt(n)];
      } else {
        for (int k = 0; k < forks; k++) {
          int f = rnd.nextInt(forks);
          int size = from[f + 1] - from[f];
          for (int m = 0; m < size; m++) sample[len++] = values[from[f] + rnd.nextInt(size)];
        }
      }
      medians[i] = median(Arrays.copyOf(sample, len));
    }
    return new double[] {percentile(medians, 2.5), percentile(medians, 97.5)};
  }

  static double median(double[] v) {
    return percentile(v, 50);
  }

  static double percentile(double[] v, double p) {
    double[] s = v.clone();
    Arrays.sort(s);
    double pos = p / 100.0 * (s.length - 1);
    int lo = (int) Math.floor(pos);
    int hi = (int) Math.ceil(pos);
    return s[lo] + (s[hi] - s[lo]) * (pos - lo);
  }

  private static String f(double v) {
    return Report.num(v);
  }
}
