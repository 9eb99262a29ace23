package dev.omnium.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.sql.DataSource;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Every object a read-only transaction (case 1, 1 thread) allocates, by class and allocating
 * frame, per contender: run in a JVM without thread-local allocation buffers
 * ({@code -XX:-UseTLAB}), where Java Flight Recorder records each allocation (not a sample) as
 * an outside-TLAB event with its stack. The rows where omnium differs from the limit are the
 * exact cost of each layer, which the sampled breakdown ({@link Profile}) can only estimate.
 *
 * <pre>java -XX:-UseTLAB -cp benchmarks/target/benchmarks.jar dev.omnium.bench.Profile --sites
 *     [--tx 1000] [--out file.md]</pre>
 */
public final class AllocationSites {
  private static final Contender[] CONTENDERS = {Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
      Contender.OMNIUM_DATASOURCE};

  private AllocationSites() { }

  /** Records {@code tx} transactions per contender and writes the table to {@code out}. */
  static void run(int tx, Path out) throws Exception {
    boolean tlab = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .noneMatch(a -> a.equals("-XX:-UseTLAB"));
    if (tlab) {
      throw new IllegalStateException("run with -XX:-UseTLAB: every allocation is an event then");
    }
    int[] ids = Workloads.ids(0xa110cL, 4096);
    Map<Contender, Map<String, Double>> bytes = new EnumMap<>(Contender.class);
    Map<Contender, Double> totals = new EnumMap<>(Contender.class);
    Path dir = Files.createTempDirectory("omnium-alloc");
    try (BenchCluster cluster = BenchCluster.start()) {
      // the limit twice, the first recording discarded: it catches the JVM's one-time work
      Contender[] runs = {Contender.REPLICA_POOL, Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
          Contender.OMNIUM_DATASOURCE};
      for (Contender c : runs) {
        DataSource ds = c.open(cluster);
        try {
          Workloads.awaitReadsOn(ds, "replica", Duration.ofSeconds(30), c.name());
          Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
          for (int i = 0; i < 5000; i++) Workloads.readTx(ds, ids[i & 4095]);
          Path file = dir.resolve(c.name() + ".jfr");
          long self = Thread.currentThread().getId();
          try (Recording r = new Recording()) {
            r.enable("jdk.ObjectAllocationOutsideTLAB").withStackTrace();
            r.start();
            for (int i = 0; i < tx; i++) Workloads.readTx(ds, ids[i & 4095]);
            r.stop();
            r.dump(file);
          }
          Map<String, Double> sites = new TreeMap<>();
          double total = 0;
          for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            RecordedThread t = e.getThread("eventThread");
            if (t == null || t.getJavaThreadId() != self) continue;
            double b = e.getLong("allocationSize") / (double) tx;
            sites.merge(site(e), b, Double::sum);
            total += b;
          }
          bytes.put(c, sites);
          totals.put(c, total);
          System.out.printf(Locale.ROOT, "[allocation sites] %-18s %.0f B/tx%n", c, total);
        } finally {
          Contender.close(ds);
        }
      }
    }
    String md = markdown(tx, bytes, totals);
    System.out.println(md);
    if (out != null) Files.writeString(out, md);
  }

  /** The allocated class and the nearest frame outside the JDK (who asked for it). */
  private static String site(RecordedEvent e) {
    String cls = e.getClass("objectClass").getName();
    String where = "?";
    if (e.getStackTrace() != null) {
      List<RecordedFrame> frames = e.getStackTrace().getFrames();
      for (RecordedFrame f : frames) {
        String type = f.getMethod().getType().getName();
        if (type.startsWith("java.") || type.startsWith("jdk.") || type.startsWith("sun.")) continue;
        where = type.substring(type.lastIndexOf('.') + 1) + "." + f.getMethod().getName();
        break;
      }
    }
    return "`" + simple(cls) + "` | " + where;
  }

  private static String simple(String cls) {
    if (cls.startsWith("[")) return cls;
    return cls.substring(cls.lastIndexOf('.') + 1);
  }

  static String markdown(int tx, Map<Contender, Map<String, Double>> bytes, Map<Contender, Double> totals) {
    StringBuilder b = new StringBuilder("### 8c. Every allocation of a read-only transaction, by site\n\n");
    b.append(tx).append(" Spring-shaped read-only transactions per contender, 1 thread, after warm-up, in a JVM ")
        .append("without thread-local allocation buffers (`-XX:-UseTLAB`), where Java Flight Recorder records ")
        .append("every allocation with its stack (an exact count, unlike the sampled table above). Rows: the ")
        .append("allocated class and the nearest frame outside the JDK; only the rows where omnium differs from ")
        .append("(a) by 4 B/tx or more (the rest is the same pgjdbc and HikariCP work for everyone). Rare, large ")
        .append("allocations (a pgjdbc buffer growing) show as a few B/tx in any column.\n\n");
    b.append("| class | allocated in | (a) B/tx | (b) B/tx | (c) B/tx |\n|---|---|---:|---:|---:|\n");
    TreeSet<String> keys = new TreeSet<>();
    for (Map<String, Double> m : bytes.values()) keys.addAll(m.keySet());
    Map<String, Double> a = bytes.getOrDefault(Contender.REPLICA_POOL, Map.of());
    for (String k : keys) {
      double va = a.getOrDefault(k, 0.0);
      boolean differs = false;
      for (Contender c : CONTENDERS) {
        if (Math.abs(bytes.getOrDefault(c, Map.of()).getOrDefault(k, 0.0) - va) >= 4) differs = true;
      }
      if (!differs) continue;
      b.append("| ").append(k);
      for (Contender c : CONTENDERS) {
        b.append(String.format(Locale.ROOT, " | %.0f", bytes.getOrDefault(c, Map.of()).getOrDefault(k, 0.0)));
      }
      b.append(" |\n");
    }
    b.append("| **total** | |");
    for (Contender c : CONTENDERS) {
      b.append(String.format(Locale.ROOT, " **%.0f** |", totals.getOrDefault(c, 0.0)));
    }
    b.append("\n\n");
    return b.toString();
  }
}
