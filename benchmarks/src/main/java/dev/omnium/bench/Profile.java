package dev.omnium.bench;

import com.sun.management.ThreadMXBean;
import com.zaxxer.hikari.HikariDataSource;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import javax.sql.DataSource;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where the client cost of a read-only transaction (case 1, 1 thread) goes, per contender: a
 * Java Flight Recorder recording of the measuring thread (allocation samples and execution
 * samples), each sample charged to the layer that caused it, i.e. the nearest frame on its stack
 * that belongs to omnium, HikariCP, pgjdbc or the benchmark. HikariCP frames called from omnium
 * are omnium's internal pool (the second borrow and return, the second layer of proxies); the
 * others are the application's pool. Allocation is each layer's share of the sampled bytes times
 * the thread's measured bytes per transaction; Java time is each layer's execution samples times
 * the sampling period (a thread is sampled only while it runs Java code), and the rest of the
 * thread's CPU time, the kernel's socket work and the JVM's own code, is shown apart. The
 * contenders take turns in slices. Also measured: one HikariCP borrow and return alone.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.Profile [--tx 20000] [--out file.md]</pre>
 *
 * <p>With {@code --sites}, in a JVM started with {@code -XX:-UseTLAB}: every allocation by site
 * instead ({@link AllocationSites}).
 */
public final class Profile {
  private static final Contender[] CONTENDERS = {Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
      Contender.OMNIUM_DATASOURCE};
  private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();
  private static final String[] LAYERS = {
      "application HikariCP pool", "omnium connection and routing", "omnium statement and result-set proxies",
      "omnium parameter log (record, replay)", "omnium replica session wrapper",
      "omnium's internal HikariCP pool (second borrow/return, second proxy layer)", "pgjdbc",
      "benchmark code", "JDK and other"};

  /** JFR's shortest sampling period. */
  private static final Duration SAMPLE_PERIOD = Duration.ofMillis(1);
  /** Turns each contender takes. */
  private static final int SLICES = 10;
  /** Transactions per pool in each paired round of section 8b. */
  private static final int BOUND_BLOCK = 50;

  private Profile() { }

  /** One contender's recordings, summed over its slices. */
  static final class Charges {
    /** Sampled bytes per layer. */
    final Map<String, Double> bytes = new LinkedHashMap<>();
    /** Execution samples per layer. */
    final Map<String, Double> samples = new LinkedHashMap<>();
    double sampledBytes;
    double totalSamples;
    long cpuNanos;
    long measuredBytes;
    long tx;

    Charges() {
      for (String l : LAYERS) {
        bytes.put(l, 0.0);
        samples.put(l, 0.0);
      }
    }

    double cpuMicrosPerTx() {
      return cpuNanos / 1000.0 / tx;
    }

    double bytesPerTx() {
      return measuredBytes / (double) tx;
    }

    /** The layer's share of the sampled bytes times the measured bytes per transaction. */
    double bytesPerTx(String layer) {
      return sampledBytes == 0 ? 0 : bytes.get(layer) / sampledBytes * bytesPerTx();
    }

    /**
     * Time running Java code in the layer per transaction: its samples times the period. A thread
     * is sampled only while it runs Java code, so the samples see neither the kernel's socket work
     * nor the JVM's own code.
     */
    double javaMicrosPerTx(String layer) {
      return samples.get(layer) * SAMPLE_PERIOD.toNanos() / 1000.0 / tx;
    }

    double javaMicrosPerTx() {
      return totalSamples * SAMPLE_PERIOD.toNanos() / 1000.0 / tx;
    }
  }

  public static void main(String[] args) throws Exception {
    int tx = 20_000;
    Path out = null;
    boolean sites = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--tx": tx = Integer.parseInt(args[++i]); break;
        case "--out": out = Path.of(args[++i]); break;
        case "--sites": sites = true; break;
        default: throw new IllegalArgumentException("usage: Profile [--sites] [--tx N] [--out file.md]");
      }
    }
    if (sites) { // every allocation by site, in a JVM run with -XX:-UseTLAB
      AllocationSites.run(tx, out);
      return;
    }
    int[] ids = Workloads.ids(0xf1e1dL, 4096);
    Map<Contender, Charges> charges = new EnumMap<>(Contender.class);
    Map<Contender, DataSource> open = new EnumMap<>(Contender.class);
    Path dir = Files.createTempDirectory("omnium-profile");
    double borrowNanos;
    Map<String, double[]> bound;
    int boundRounds = Math.max(2, tx / 250);
    try (BenchCluster cluster = BenchCluster.start()) {
      try {
        for (Contender c : CONTENDERS) {
          DataSource ds = c.open(cluster);
          open.put(c, ds);
          Workloads.awaitReadsOn(ds, "replica", Duration.ofSeconds(30), c.name());
          Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
          for (int i = 0; i < Math.min(tx, 5000); i++) Workloads.readTx(ds, ids[i & 4095]);
          charges.put(c, new Charges());
        }
        // contenders take turns in slices, so that load drifting over the run reaches each alike
        int perSlice = Math.max(1, tx / SLICES);
        for (int s = 0; s < SLICES; s++) {
          for (int k = 0; k < CONTENDERS.length; k++) {
            Contender c = CONTENDERS[(s + k) % CONTENDERS.length];
            record(open.get(c), ids, perSlice, dir.resolve(c.name() + "-" + s + ".jfr"), charges.get(c));
          }
        }
        borrowNanos = borrowAndReturnNanos(cluster);
        bound = boundCost(cluster, open.get(Contender.REPLICA_POOL), open.get(Contender.OMNIUM_DRIVER), ids,
            boundRounds);
      } finally {
        for (DataSource ds : open.values()) Contender.close(ds);
      }
    } finally {
      try (var files = Files.list(dir)) {
        for (Path f : (Iterable<Path>) files::iterator) Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    }
    for (Contender c : CONTENDERS) {
      Charges ch = charges.get(c);
      System.out.printf(Locale.ROOT, "[profile] %-18s %.2f µs CPU/tx, %.2f µs/tx in Java (%d samples), %.0f B/tx%n",
          c, ch.cpuMicrosPerTx(), ch.javaMicrosPerTx(), (long) ch.totalSamples, ch.bytesPerTx());
    }
    String md = markdown(tx, charges, borrowNanos) + boundMarkdown(bound, boundRounds);
    System.out.println(md);
    if (out != null) {
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md);
      System.out.println("written to " + out);
    }
  }

  /** One slice of one contender: {@code tx} transactions under a recording of its own. */
  private static void record(DataSource ds, int[] ids, int tx, Path file, Charges ch) throws Exception {
    long self = Thread.currentThread().getId();
    try (Recording r = new Recording()) {
      // TLAB refills and outside-TLAB allocations, weighted by size: every allocated byte has the
      // same chance to be charged, whatever happened before the recording started
      r.enable("jdk.ObjectAllocationInNewTLAB").withStackTrace();
      r.enable("jdk.ObjectAllocationOutsideTLAB").withStackTrace();
      r.enable("jdk.ExecutionSample").withPeriod(SAMPLE_PERIOD);
      r.start();
      long cpu0 = THREADS.getCurrentThreadCpuTime();
      long alloc0 = THREADS.getThreadAllocatedBytes(self);
      for (int i = 0; i < tx; i++) Workloads.readTx(ds, ids[i & 4095]);
      ch.cpuNanos += THREADS.getCurrentThreadCpuTime() - cpu0;
      ch.measuredBytes += THREADS.getThreadAllocatedBytes(self) - alloc0;
      ch.tx += tx;
      r.stop();
      r.dump(file);
    }
    charge(file, self, ch);
  }

  /**
   * The CPU time of one HikariCP borrow and return of an idle replica session, no statement, in
   * a hot loop: what the second pool of driver mode adds at least (its share of cache misses in a
   * real transaction is not in it). The median of a few rounds of a million each.
   */
  private static double borrowAndReturnNanos(BenchCluster cluster) throws Exception {
    // autocommit off, as omnium's replica pool lends them for a read-only transaction
    try (HikariDataSource pool = replicaPool(cluster, "borrow-alone", new Properties(), false)) {
      double[] rounds = new double[7];
      int n = 1_000_000;
      for (int r = 0; r < rounds.length; r++) {
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        for (int i = 0; i < n; i++) pool.getConnection().close();
        rounds[r] = (THREADS.getCurrentThreadCpuTime() - cpu0) / (double) n;
      }
      return Interleaved.median(java.util.Arrays.copyOfRange(rounds, 2, rounds.length)); // 2 to warm up
    }
  }

  /** omnium's startup options on a replica session, at their defaults (OmniumConfig). */
  static final String REPLICA_OPTIONS = "-c statement_timeout=5000 -c idle_in_transaction_session_timeout=60000"
      + " -c default_transaction_read_only=on";
  /** omnium's client-side bound on a replica session: replicaStatementTimeout 5 s + clientTimeoutMargin 2 s. */
  static final String REPLICA_SOCKET_TIMEOUT = "7";

  /**
   * What the limit (a) costs with each part of omnium's replica session settings, against (a)
   * itself, in paired rounds (each a block of {@link #BOUND_BLOCK} transactions per pool, the
   * order rotating), with (b) in the same rounds: the median per-round CPU difference and its 95%
   * CI (rounds resampled).
   *
   * @return per variant: median, CI low, CI high (µs per transaction)
   */
  private static Map<String, double[]> boundCost(BenchCluster cluster, DataSource limit, DataSource driver,
      int[] ids, int rounds) throws Exception {
    Properties socket = new Properties();
    socket.setProperty("socketTimeout", REPLICA_SOCKET_TIMEOUT);
    Properties options = new Properties();
    options.setProperty("options", REPLICA_OPTIONS);
    Map<String, DataSource> pools = new LinkedHashMap<>();
    pools.put("(a)", limit);
    pools.put("(a) with omnium's `socketTimeout=" + REPLICA_SOCKET_TIMEOUT + "`", replicaPool(cluster, "socket", socket, true));
    pools.put("(a) with omnium's startup options (`" + REPLICA_OPTIONS + "`)", replicaPool(cluster, "options", options, true));
    pools.put(Contender.OMNIUM_DRIVER.label(), driver);
    try {
      for (DataSource ds : pools.values()) {
        Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
        for (int i = 0; i < 2000; i++) Workloads.readTx(ds, ids[i & 4095]);
      }
      List<String> names = new java.util.ArrayList<>(pools.keySet());
      double[][] cpu = new double[names.size()][rounds];
      for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < names.size(); k++) {
          int j = (r + k) % names.size();
          DataSource ds = pools.get(names.get(j));
          long cpu0 = THREADS.getCurrentThreadCpuTime();
          for (int i = 0; i < BOUND_BLOCK; i++) Workloads.readTx(ds, ids[(r * BOUND_BLOCK + i) & 4095]);
          cpu[j][r] = (THREADS.getCurrentThreadCpuTime() - cpu0) / 1000.0 / BOUND_BLOCK;
        }
      }
      Map<String, double[]> result = new LinkedHashMap<>();
      int[] oneFork = new int[rounds];
      for (int j = 1; j < names.size(); j++) {
        double[] d = new double[rounds];
        for (int r = 0; r < rounds; r++) d[r] = cpu[j][r] - cpu[0][r];
        double[] ci = Interleaved.bootstrapMedianCi(d, oneFork, 0x5eedL + j);
        result.put(names.get(j), new double[] {Interleaved.median(d), ci[0], ci[1]});
      }
      return result;
    } finally {
      for (DataSource ds : pools.values()) {
        if (ds != limit && ds != driver) Contender.close(ds);
      }
    }
  }

  private static HikariDataSource replicaPool(BenchCluster cluster, String name, Properties props,
      boolean autoCommit) {
    return Contender.pool("bench-limit-" + name, "jdbc:postgresql://" + cluster.replica().hostPort() + "/"
        + cluster.database(), null, props, autoCommit, cluster);
  }

  private static String boundMarkdown(Map<String, double[]> bound, int rounds) {
    StringBuilder b = new StringBuilder();
    b.append("### 8b. What omnium's replica session settings cost the limit\n\n");
    b.append("The limit (a) again, with one part of what omnium sets on its replica sessions at a time, against (a) ")
        .append("itself, and (b) in the same rounds: ").append(rounds).append(" paired rounds in one JVM, each a block of ")
        .append(BOUND_BLOCK).append(" read-only transactions per pool, the order rotating. *CPU over (a)*: the median per-round difference ")
        .append("in the measuring thread's CPU per transaction, with its 95% CI (rounds resampled). `socketTimeout` makes ")
        .append("every blocking read of the JDK's socket wait in `poll` with a timeout instead of without one.\n\n");
    b.append("| pool | CPU over (a) µs/tx | 95% CI |\n|---|---:|---:|\n");
    for (Map.Entry<String, double[]> e : bound.entrySet()) {
      double[] v = e.getValue();
      b.append(String.format(Locale.ROOT, "| %s | %+.2f | %+.2f…%+.2f |%n", e.getKey(), v[0], v[1], v[2]));
    }
    b.append('\n');
    return b.toString();
  }

  /**
   * Charges the recording's samples of the measuring thread to layers: allocation by sampled
   * bytes, Java execution by samples (their sampled thread is a field of its own, not the
   * event's thread).
   */
  private static void charge(Path file, long threadId, Charges ch) throws Exception {
    for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
      String type = e.getEventType().getName();
      boolean execution = type.equals("jdk.ExecutionSample");
      RecordedThread t = execution ? e.getThread("sampledThread") : e.getThread();
      if (t == null || t.getJavaThreadId() != threadId || e.getStackTrace() == null) continue;
      String layer = layer(e.getStackTrace().getFrames());
      if (execution) {
        ch.samples.merge(layer, 1.0, Double::sum);
        ch.totalSamples++;
      } else {
        double bytes = type.equals("jdk.ObjectAllocationInNewTLAB") ? e.getLong("tlabSize")
            : e.getLong("allocationSize");
        ch.bytes.merge(layer, bytes, Double::sum);
        ch.sampledBytes += bytes;
      }
    }
  }

  /** The layer of the nearest frame (from the top) that belongs to a known library. */
  static String layer(List<RecordedFrame> frames) {
    for (int i = 0; i < frames.size(); i++) {
      String cls = frames.get(i).getMethod().getType().getName();
      if (cls.startsWith("dev.omnium.jdbc.")) return omniumLayer(cls.substring("dev.omnium.jdbc.".length()));
      if (cls.startsWith("com.zaxxer.hikari.")) {
        for (int j = i + 1; j < frames.size(); j++) {
          if (frames.get(j).getMethod().getType().getName().startsWith("dev.omnium.jdbc.")) return LAYERS[5];
        }
        return LAYERS[0];
      }
      if (cls.startsWith("org.postgresql.")) return LAYERS[6];
      if (cls.startsWith("dev.omnium.bench.")) return LAYERS[7];
    }
    return LAYERS[8];
  }

  private static String omniumLayer(String simple) {
    if (simple.startsWith("ParameterLog")) return LAYERS[3];
    if (simple.startsWith("ReplicaSession")) return LAYERS[4];
    if (simple.startsWith("Logical") || simple.startsWith("PreparedStatementProxy")
        || simple.startsWith("CallableStatementProxy") || simple.startsWith("ResultSetProxy")) {
      return LAYERS[2];
    }
    return LAYERS[1];
  }

  private static String markdown(int tx, Map<Contender, Charges> charges, double borrowNanos) {
    StringBuilder b = new StringBuilder();
    b.append("### Where the client cost of a read-only transaction goes (JFR)\n\n");
    b.append(tx).append(" Spring-shaped read-only transactions per contender, 1 thread, after warm-up, the contenders ")
        .append("taking turns in ").append(SLICES).append(" slices, each slice recorded with Java Flight Recorder ")
        .append("(TLAB and outside-TLAB allocation events weighted by size; execution samples every ")
        .append(SAMPLE_PERIOD.toMillis()).append(" ms; the measuring thread only). Each sample is charged to the ")
        .append("nearest frame of a known layer on its stack; HikariCP frames below an omnium frame are omnium's ")
        .append("internal pool. *B/tx*: the layer's share of the sampled bytes × the bytes the thread allocated per ")
        .append("transaction. *Java µs/tx*: the layer's execution samples × the period ÷ the transactions, i.e. the ")
        .append("time the thread ran that layer's Java code (JFR samples a thread only while it runs Java code). ")
        .append("*Outside Java code*: the rest of the thread's CPU time, the kernel's socket work (loopback TCP, ")
        .append("waking the server) and the JVM's own code; no layer can be charged for it from these samples. ")
        .append("A layer of n samples is known to about ±√n samples.\n\n");
    b.append("| layer |");
    for (Contender c : CONTENDERS) b.append(' ').append(c.label()).append(" B/tx | Java µs/tx |");
    b.append("\n|---|");
    for (Contender ignored : CONTENDERS) b.append("---:|---:|");
    b.append('\n');
    for (String l : LAYERS) {
      b.append("| ").append(l).append(" |");
      for (Contender c : CONTENDERS) {
        Charges ch = charges.get(c);
        b.append(String.format(Locale.ROOT, " %.0f | %.2f |", ch.bytesPerTx(l), ch.javaMicrosPerTx(l)));
      }
      b.append('\n');
    }
    b.append("| Java code, all layers (execution samples) |");
    for (Contender c : CONTENDERS) {
      Charges ch = charges.get(c);
      b.append(String.format(Locale.ROOT, " | %.2f (%d) |", ch.javaMicrosPerTx(), (long) ch.totalSamples));
    }
    b.append("\n| outside Java code (kernel socket work, JVM) |");
    for (Contender c : CONTENDERS) {
      Charges ch = charges.get(c);
      b.append(String.format(Locale.ROOT, " | %.2f |", ch.cpuMicrosPerTx() - ch.javaMicrosPerTx()));
    }
    b.append("\n| **measured total** (thread counters) |");
    for (Contender c : CONTENDERS) {
      Charges ch = charges.get(c);
      b.append(String.format(Locale.ROOT, " **%.0f** | **%.2f** CPU |", ch.bytesPerTx(), ch.cpuMicrosPerTx()));
    }
    b.append("\n\n");
    Charges limit = charges.get(Contender.REPLICA_POOL);
    for (Contender c : new Contender[] {Contender.OMNIUM_DRIVER, Contender.OMNIUM_DATASOURCE}) {
      Charges ch = charges.get(c);
      b.append(String.format(Locale.ROOT, "- %s over (a): %+.2f µs/tx of Java code, %+.2f µs/tx of CPU in all, %+.0f B/tx.%n",
          c.label(), ch.javaMicrosPerTx() - limit.javaMicrosPerTx(), ch.cpuMicrosPerTx() - limit.cpuMicrosPerTx(),
          ch.bytesPerTx() - limit.bytesPerTx()));
    }
    b.append(String.format(Locale.ROOT, "- One HikariCP borrow and return of an idle replica session alone (no statement, "
        + "a hot loop of a million, median of 5 rounds): %.0f ns of CPU. Driver mode pays it twice per transaction "
        + "(the application's pool and omnium's replica pool), DataSource mode and (a) once.%n", borrowNanos));
    for (Contender c : new Contender[] {Contender.OMNIUM_DRIVER, Contender.OMNIUM_DATASOURCE}) {
      Charges ch = charges.get(c);
      b.append("<!-- profile ").append(c.name()).append(String.format(Locale.ROOT, " %.1f %.3f %.3f -->%n",
          ch.bytesPerTx() - limit.bytesPerTx(), ch.cpuMicrosPerTx() - limit.cpuMicrosPerTx(),
          ch.javaMicrosPerTx() - limit.javaMicrosPerTx()));
    }
    b.append('\n');
    return b.toString();
  }
}
