package dev.omnium.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import javax.sql.DataSource;

/**
 * Case 1 with the contenders interleaved, which JMH cannot do: one cluster, all five data sources
 * open at once, and rounds in which every contender runs a short block of read-only transactions,
 * in a rotating order. Each contender's block is compared with the limit's block of the same round
 * (seconds apart), so load that drifts over the run (other processes on a shared machine) cancels
 * out of the ratios. Reports per contender the median block time and the median of its per-round
 * ratios to (a) with a bootstrap 95% confidence interval of that median.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.Interleaved [--rounds 40] [--block 200] [--out file.md]</pre>
 */
public final class Interleaved {
  private static final Contender[] CONTENDERS = {Contender.REPLICA_POOL, Contender.OMNIUM_DRIVER,
      Contender.OMNIUM_DATASOURCE, Contender.PGJDBC_MULTIHOST, Contender.AWS_WRAPPER_SRW};
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  public static void main(String[] args) throws Exception {
    int rounds = 40;
    int block = 200;
    int warmRounds = 8;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds": rounds = Integer.parseInt(args[++i]); break;
        case "--block": block = Integer.parseInt(args[++i]); break;
        case "--warm-rounds": warmRounds = Integer.parseInt(args[++i]); break;
        case "--out": out = Path.of(args[++i]); break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Map<Contender, DataSource> sources = new EnumMap<>(Contender.class);
    Map<Contender, double[]> micros = new EnumMap<>(Contender.class);
    Map<Contender, double[]> cpu = new EnumMap<>(Contender.class);
    int[] ids = Workloads.ids(0x5eed, 4096);
    String md;
    try (BenchCluster cluster = BenchCluster.start()) {
      try {
        for (Contender c : CONTENDERS) {
          DataSource ds = c.open(cluster);
          sources.put(c, ds);
          Workloads.awaitReadsOn(ds, "replica", Duration.ofSeconds(30), c.name());
          Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
          micros.put(c, new double[rounds]);
          cpu.put(c, new double[rounds]);
        }
        int next = 0;
        for (int round = -warmRounds; round < rounds; round++) {
          for (int k = 0; k < CONTENDERS.length; k++) {
            Contender c = CONTENDERS[Math.floorMod(round + k, CONTENDERS.length)]; // rotate who goes first
            DataSource ds = sources.get(c);
            long cpu0 = THREADS.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            for (int i = 0; i < block; i++) Workloads.readTx(ds, ids[next++ & 4095]);
            long t1 = System.nanoTime();
            long cpu1 = THREADS.getCurrentThreadCpuTime();
            if (round >= 0) {
              micros.get(c)[round] = (t1 - t0) / 1000.0 / block;
              cpu.get(c)[round] = (cpu1 - cpu0) / 1000.0 / block;
            }
          }
        }
      } finally {
        for (DataSource ds : sources.values()) Contender.close(ds);
      }
      md = markdown(rounds, block, warmRounds, micros, cpu);
    }
    System.out.println(md);
    if (out != null) {
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md);
      System.out.println("written to " + out);
    }
  }

  private static String markdown(int rounds, int block, int warmRounds, Map<Contender, double[]> micros,
                                 Map<Contender, double[]> cpu) {
    StringBuilder b = new StringBuilder();
    b.append("### Case 1 interleaved (paired rounds)\n\n");
    b.append("One cluster, the five data sources open side by side; ").append(rounds).append(" rounds (after ")
        .append(warmRounds).append(" warm-up rounds) in which each contender runs ").append(block)
        .append(" Spring-shaped read-only transactions in turn, the order rotating every round. Ratios are paired: ")
        .append("each block against (a)'s block of the same round, seconds apart, so load that drifts over the run ")
        .append("cancels out. *95% CI*: bootstrap confidence interval of the median ratio.\n\n");
    b.append("| contender | median µs/op | p25–p75 µs/op | median client CPU µs/op | median ratio to (a) | 95% CI of the median ratio |\n");
    b.append("|---|---:|---:|---:|---:|---:|\n");
    double[] limit = micros.get(Contender.REPLICA_POOL);
    for (Contender c : CONTENDERS) {
      double[] t = micros.get(c);
      double[] ratios = new double[rounds];
      for (int r = 0; r < rounds; r++) ratios[r] = t[r] / limit[r];
      double[] ci = bootstrapMedianCi(ratios, 0x0b5e55edL);
      b.append("| ").append(c.label()).append(" | ").append(f(median(t))).append(" | ")
          .append(f(percentile(t, 25))).append("–").append(f(percentile(t, 75))).append(" | ")
          .append(f(median(cpu.get(c)))).append(" | ")
          .append(String.format(Locale.ROOT, "%.3f", median(ratios))).append(" | ")
          .append(String.format(Locale.ROOT, "%.3f–%.3f", ci[0], ci[1])).append(" |\n");
      // machine-readable line for the report's verdicts
      b.append("<!-- interleaved ").append(c.name()).append(' ')
          .append(String.format(Locale.ROOT, "%.5f %.5f %.5f", median(ratios), ci[0], ci[1])).append(" -->\n");
    }
    b.append('\n');
    // pairwise against (d) and (e): omnium faster?
    b.append("| pair (same rounds) | median ratio | 95% CI |\n|---|---:|---:|\n");
    for (Contender o : new Contender[] {Contender.OMNIUM_DRIVER, Contender.OMNIUM_DATASOURCE}) {
      for (Contender p : new Contender[] {Contender.PGJDBC_MULTIHOST, Contender.AWS_WRAPPER_SRW}) {
        double[] ratios = new double[rounds];
        for (int r = 0; r < rounds; r++) ratios[r] = micros.get(o)[r] / micros.get(p)[r];
        double[] ci = bootstrapMedianCi(ratios, 0x5eedL);
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

  static double[] bootstrapMedianCi(double[] values, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int n = values.length;
    double[] medians = new double[2000];
    double[] sample = new double[n];
    for (int i = 0; i < medians.length; i++) {
      for (int j = 0; j < n; j++) sample[j] = values[rnd.nextInt(n)];
      medians[i] = median(sample);
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
