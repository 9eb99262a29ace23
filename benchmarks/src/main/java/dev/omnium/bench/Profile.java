package dev.omnium.bench;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 * the thread's measured bytes per transaction; CPU is each layer's share of the execution samples
 * times the thread's measured CPU time per transaction.
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

  private Profile() { }

  /** One contender's recording, reduced. */
  static final class Charges {
    final Map<String, Double> bytes = new LinkedHashMap<>();
    final Map<String, Double> samples = new LinkedHashMap<>();
    double totalSamples;
    double cpuMicrosPerTx;
    double measuredBytesPerTx;

    Charges() {
      for (String l : LAYERS) {
        bytes.put(l, 0.0);
        samples.put(l, 0.0);
      }
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
    Path dir = Files.createTempDirectory("omnium-profile");
    try (BenchCluster cluster = BenchCluster.start()) {
      for (Contender c : CONTENDERS) {
        DataSource ds = c.open(cluster);
        try {
          Workloads.awaitReadsOn(ds, "replica", Duration.ofSeconds(30), c.name());
          Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
          for (int i = 0; i < Math.min(tx, 5000); i++) Workloads.readTx(ds, ids[i & 4095]);
          Path file = dir.resolve(c.name() + ".jfr");
          Charges ch = new Charges();
          long self = Thread.currentThread().getId();
          try (Recording r = new Recording()) {
            // TLAB refills and outside-TLAB allocations, weighted by size: every allocated byte has the
            // same chance to be charged, whatever happened before the recording started
            r.enable("jdk.ObjectAllocationInNewTLAB").withStackTrace();
            r.enable("jdk.ObjectAllocationOutsideTLAB").withStackTrace();
            r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(2));
            r.start();
            long cpu0 = THREADS.getCurrentThreadCpuTime();
            long alloc0 = THREADS.getThreadAllocatedBytes(self);
            for (int i = 0; i < tx; i++) Workloads.readTx(ds, ids[i & 4095]);
            ch.cpuMicrosPerTx = (THREADS.getCurrentThreadCpuTime() - cpu0) / 1000.0 / tx;
            ch.measuredBytesPerTx = (THREADS.getThreadAllocatedBytes(self) - alloc0) / (double) tx;
            r.stop();
            r.dump(file);
          }
          charge(file, self, tx, ch);
          charges.put(c, ch);
          System.out.printf(Locale.ROOT, "[profile] %-18s %.2f µs CPU/tx, %.0f B/tx%n", c, ch.cpuMicrosPerTx,
              ch.measuredBytesPerTx);
        } finally {
          Contender.close(ds);
        }
      }
    }
    String md = markdown(tx, charges);
    System.out.println(md);
    if (out != null) {
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md);
      System.out.println("written to " + out);
    }
  }

  /**
   * Charges the recording's samples of the measuring thread to layers. Allocation: each layer's
   * share of the sampled bytes times the measured bytes per transaction; CPU: the execution
   * samples (their sampled thread is a field of its own, not the event's thread).
   */
  private static void charge(Path file, long threadId, int tx, Charges ch) throws Exception {
    Map<String, Double> sampled = new LinkedHashMap<>();
    double sampledTotal = 0;
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
        sampled.merge(layer, bytes, Double::sum);
        sampledTotal += bytes;
      }
    }
    if (sampledTotal > 0) {
      for (Map.Entry<String, Double> s : sampled.entrySet()) {
        ch.bytes.put(s.getKey(), s.getValue() / sampledTotal * ch.measuredBytesPerTx);
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

  private static String markdown(int tx, Map<Contender, Charges> charges) {
    StringBuilder b = new StringBuilder();
    b.append("### Where the client cost of a read-only transaction goes (JFR)\n\n");
    b.append(tx).append(" Spring-shaped read-only transactions per contender, 1 thread, after warm-up, recorded with ")
        .append("Java Flight Recorder (TLAB and outside-TLAB allocation events weighted by size, execution samples ")
        .append("every 2 ms, the measuring thread only). Each sample is charged to the nearest frame of a known layer ")
        .append("on its stack; HikariCP frames below an omnium frame are omnium's internal pool. *B/tx*: the layer's ")
        .append("share of the sampled bytes × the bytes the thread allocated per transaction (last row); a sampled ")
        .append("statistic: layers of a few dozen bytes need the full run's length. *CPU µs/tx*: the layer's share of execution ")
        .append("samples × the thread's CPU time per transaction (samples only see Java code running, not the ")
        .append("kernel's socket work, which is in the total).\n\n");
    b.append("| layer |");
    for (Contender c : CONTENDERS) b.append(' ').append(c.label()).append(" B/tx | CPU µs/tx |");
    b.append("\n|---|");
    for (Contender ignored : CONTENDERS) b.append("---:|---:|");
    b.append('\n');
    for (String l : LAYERS) {
      b.append("| ").append(l).append(" |");
      for (Contender c : CONTENDERS) {
        Charges ch = charges.get(c);
        double cpu = ch.totalSamples == 0 ? 0 : ch.samples.get(l) / ch.totalSamples * ch.cpuMicrosPerTx;
        b.append(String.format(Locale.ROOT, " %.0f | %.2f |", ch.bytes.get(l), cpu));
      }
      b.append('\n');
    }
    b.append("| **measured total** (thread counters) |");
    for (Contender c : CONTENDERS) {
      Charges ch = charges.get(c);
      b.append(String.format(Locale.ROOT, " **%.0f** | **%.2f** |", ch.measuredBytesPerTx, ch.cpuMicrosPerTx));
      b.append("");
    }
    b.append('\n');
    for (Contender c : new Contender[] {Contender.OMNIUM_DRIVER, Contender.OMNIUM_DATASOURCE}) {
      Charges ch = charges.get(c);
      Charges limit = charges.get(Contender.REPLICA_POOL);
      b.append("<!-- profile ").append(c.name()).append(String.format(Locale.ROOT, " %.1f %.3f -->%n",
          ch.measuredBytesPerTx - limit.measuredBytesPerTx, ch.cpuMicrosPerTx - limit.cpuMicrosPerTx));
    }
    b.append('\n');
    return b.toString();
  }
}
