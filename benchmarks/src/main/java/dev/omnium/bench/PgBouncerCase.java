package dev.omnium.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgBouncer;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Logger;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Case 9: omnium through PgBouncer next to plain pgjdbc through the same bouncer. Debian's
 * PgBouncer (the sandbox's, its default configuration) in front of the primary and of the
 * replica; every contender's URL adds {@code prepareThreshold=0} and nothing else.
 *
 * <ul>
 *   <li>round trips per unit of work, counted on the wire between the client and the bouncer
 *       ({@link WireCounter}: the ReadyForQuery messages the bouncer passes on), and client logins
 *       the bouncer logged (log_connections, on by default) while the work ran;</li>
 *   <li>read-only transactions (case 1's work) interleaved in paired rounds, one thread, each
 *       contender's block against the limit's block of the same round, as {@link Interleaved}:
 *       the median of the per-round ratios with a bootstrap 95% interval.</li>
 *   <li>in the same rounds, (a′): plain pgjdbc sending what omnium's read route sends each
 *       transaction behind a pooler, its two {@code SET LOCAL}s with the query: what the promised
 *       timeouts cost the server and the bouncer alone, apart from omnium's own code.</li>
 * </ul>
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.PgBouncerCase [--modes transaction,session]
 *     [--tx 500] [--rounds 200] [--block 50] [--warm-rounds 10] [--warm-quiet-ms 0] [--out file.md]</pre>
 * Exits non-zero when omnium adds a round trip or logs in per transaction (counted, so exact); a
 * ratio over the target is reported as missed but is a measurement of the machine it ran on.
 */
public final class PgBouncerCase {
  /** The contenders of this case. */
  enum Who {
    PLAIN("(a) HikariCP → PgBouncer, plain pgjdbc (the limit)"),
    OMNIUM_DRIVER("(b) omnium driver under HikariCP → PgBouncer"),
    OMNIUM_DATASOURCE("(c) OmniumDataSource → PgBouncer"),
    /** Timed only: not a driver of its own, so its round trips are (a)'s plus none. */
    PLAIN_SETTINGS("(a′) plain pgjdbc, with the SET LOCALs omnium's read route sends");

    final String label;

    Who(String label) {
      this.label = label;
    }
  }

  /** Counted and timed. */
  private static final Who[] ORDER = {Who.PLAIN, Who.OMNIUM_DRIVER, Who.OMNIUM_DATASOURCE};
  /** Timed. */
  private static final Who[] TIMED = Who.values();
  /**
   * What omnium's read route sends ahead of a transaction's first statement behind a pooler, with
   * the contenders' URL (the defaults {@code replicaStatementTimeout=5s},
   * {@code idleInTransactionTimeout=60s}); pgjdbc's {@code BEGIN READ ONLY} covers read-only.
   */
  static final String READ_ROUTE_SETTINGS = "SET LOCAL statement_timeout = '5000';"
      + " SET LOCAL idle_in_transaction_session_timeout = '60000'; ";
  /** (a′)'s statement: one string object, as omnium reuses one for the same settings and SQL. */
  private static final String READ_WITH_SETTINGS = READ_ROUTE_SETTINGS + BenchCluster.READ_SQL;
  private static final int READ_ROUTE_SETTING_COUNT = 2;
  /** What the bouncers are told beyond their defaults: nothing; and what every URL adds. */
  static final String PGJDBC = "prepareThreshold=0";

  private PgBouncerCase() { }

  public static void main(String[] args) throws Exception {
    List<PgBouncer.Mode> modes = List.of(PgBouncer.Mode.TRANSACTION, PgBouncer.Mode.SESSION);
    int tx = 500;
    int rounds = 200;
    int block = 50;
    int warmRounds = 10;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--modes":
          List<PgBouncer.Mode> m = new ArrayList<>();
          for (String s : args[++i].split(",")) m.add(PgBouncer.Mode.valueOf(s.toUpperCase(Locale.ROOT)));
          modes = m;
          break;
        case "--tx": tx = Integer.parseInt(args[++i]); break;
        case "--rounds": rounds = Integer.parseInt(args[++i]); break;
        case "--block": block = Integer.parseInt(args[++i]); break;
        case "--warm-rounds": warmRounds = Integer.parseInt(args[++i]); break;
        case "--warm-quiet-ms": Interleaved.warmQuietMillis = Long.parseLong(args[++i]); break;
        case "--out": out = Path.of(args[++i]); break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    List<String> problems = new ArrayList<>();
    List<String> slower = new ArrayList<>();
    StringBuilder md = new StringBuilder();
    md.append("### Case 9: through PgBouncer\n\n");
    md.append("Run ").append(LocalDate.now(ZoneOffset.UTC)).append(" on ")
        .append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ")
        .append(System.getProperty("java.version")).append(", with the bouncers and servers on the same")
        .append(" cores (and whatever else the machine was running).").append(Interleaved.haltPolling())
        .append("\n\n");
    md.append("PgBouncer ").append(bouncerVersion()).append(" (the system's, its default configuration but for")
        .append(" listen port, authentication, database and `pool_mode`, and with session pooling")
        .append(" `default_pool_size = 100`: it holds a server session per client session, and the")
        .append(" contenders hold 16 each) in front of the primary and of the")
        .append(" replica; every URL adds `").append(PGJDBC).append("` and nothing else. Round trips are")
        .append(" counted between the client and the bouncer; logins are the client logins the bouncer")
        .append(" logged while the work ran (pools were full before). Read-only transactions: case 1's work,")
        .append(" one thread, ").append(rounds).append(" paired rounds of ").append(block)
        .append(" transactions per contender after ").append(warmRounds)
        .append(" warm-up rounds").append(Interleaved.warmRule()).append("; the ratio is the median of the per-round ratios to (a), with its bootstrap")
        .append(" 95% interval. Target: a read-only transaction costs at most 1.1× (a)'s, at (a)'s round")
        .append(" trips. (a′), timed in the same rounds, is plain pgjdbc sending what omnium's read route")
        .append(" sends with each transaction's first statement behind transaction pooling, `")
        .append(READ_ROUTE_SETTINGS.trim()).append("` (`BEGIN READ ONLY` is pgjdbc's own): what the")
        .append(" promised timeouts cost the bouncer and the server per transaction, apart from omnium's")
        .append(" code. With session pooling omnium proves that the bouncer pins and resets sessions and")
        .append(" sets them once per session instead: nothing per transaction.\n\n");
    for (PgBouncer.Mode mode : modes) {
      md.append(run(mode, tx, rounds, block, warmRounds, problems, slower));
    }
    List<String> missed = new ArrayList<>(problems);
    missed.addAll(slower);
    md.append(missed.isEmpty() ? "Targets met: omnium's round trips equal plain pgjdbc's through the bouncer, no"
        + " login per transaction, and a read-only transaction within 1.1× plain pgjdbc's.\n\n"
        : "**TARGET MISSED**: " + String.join("; ", missed) + "\n\n");
    System.out.println(md);
    if (out != null) {
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md);
      System.out.println("written to " + out);
    }
    if (!problems.isEmpty()) System.exit(1);
  }

  private static String run(PgBouncer.Mode mode, int tx, int rounds, int block, int warmRounds,
      List<String> problems, List<String> slower) throws Exception {
    StringBuilder md = new StringBuilder();
    try (BenchCluster cluster = BenchCluster.start()) {
      // session pooling holds a server session per client session: PgBouncer's default of 20 per
      // database and user would not fit the three contenders' 16 sessions each
      Map<String, String> settings = mode == PgBouncer.Mode.SESSION
          ? Map.of("default_pool_size", "100") : Map.of();
      PgBouncer primary = cluster.sandbox().startPgBouncer(cluster.primary(), mode, settings);
      PgBouncer replica = cluster.sandbox().startPgBouncer(cluster.replica(), mode, settings);
      System.err.println("[pgbouncer case] " + mode.value() + " pooling");
      md.append("#### ").append(mode.value()).append(" pooling (PostgreSQL ")
          .append(cluster.sandbox().version()).append(")\n\n");
      md.append("| contender | round trips / read-only tx | logins / read-only tx | round trips / write tx |")
          .append(" logins / write tx |\n|---|---:|---:|---:|---:|\n");
      try (WireCounter pw = new WireCounter(primary.port()); WireCounter rw = new WireCounter(replica.port())) {
        Map<Who, DataSource> counted = open(cluster, pw.hostPort(), rw.hostPort(), "-counted");
        try {
          for (Who w : ORDER) {
            DataSource ds = counted.get(w);
            warm(ds);
            double[] read = count(ds, tx, false, pw, rw, primary, replica, w);
            double[] write = count(ds, tx, true, pw, rw, primary, replica, w);
            md.append("| ").append(w.label).append(" | ").append(RoundTrips.fmt(read[0])).append(" | ")
                .append(RoundTrips.fmt(read[1])).append(" | ").append(RoundTrips.fmt(write[0])).append(" | ")
                .append(RoundTrips.fmt(write[1])).append(" |\n");
            if (w != Who.PLAIN) {
              double[] plainRead = PLAIN_COUNTS.get(false);
              double[] plainWrite = PLAIN_COUNTS.get(true);
              if (read[0] > plainRead[0] + 0.005 || write[0] > plainWrite[0] + 0.005) {
                problems.add(mode.value() + ": " + w.label + " adds round trips");
              }
              if (read[1] > 0.05 || write[1] > 0.05) {
                problems.add(mode.value() + ": " + w.label + " logs in " + RoundTrips.fmt(read[1])
                    + " times per read-only transaction");
              }
            } else {
              PLAIN_COUNTS.put(false, read);
              PLAIN_COUNTS.put(true, write);
            }
          }
        } finally {
          counted.values().forEach(Contender::close);
        }
      }
      md.append('\n');
      Map<Who, DataSource> sources = open(cluster, primary.hostPort(), replica.hostPort(), "");
      HikariDataSource withSettings = plainPool("bench-plain-settings", replica.hostPort(), cluster);
      sources.put(Who.PLAIN_SETTINGS, withSettings);
      try {
        for (DataSource ds : sources.values()) {
          if (ds == withSettings) { // its pool reaches the replica: reads only
            Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
          } else {
            warm(ds);
          }
        }
        int[] ids = Workloads.ids(9, 1 << 16); // the same rows for every contender
        Map<Who, Interleaved.Series> series = Interleaved.interleave(TIMED, sources, rounds, warmRounds, 1, block,
            (ds, i) -> {
              if (ds == withSettings) {
                Workloads.readTxAfter(ds, ids[i & (ids.length - 1)], READ_WITH_SETTINGS,
                    READ_ROUTE_SETTING_COUNT);
              } else {
                Workloads.readTx(ds, ids[i & (ids.length - 1)]);
              }
            });
        double[] limit = series.get(Who.PLAIN).micros;
        md.append("| contender | µs / read-only tx (median block) | × (a), median of paired rounds | 95% CI |\n")
            .append("|---|---:|---:|---|\n");
        for (Who w : TIMED) {
          double[] mine = series.get(w).micros;
          double[] ratio = new double[mine.length];
          for (int i = 0; i < ratio.length; i++) ratio[i] = mine[i] / limit[i];
          double med = Interleaved.median(ratio);
          double[] ci = Interleaved.bootstrapMedianCi(ratio, series.get(w).fork, 31);
          md.append("| ").append(w.label).append(" | ").append(Report.num(Interleaved.median(mine))).append(" | ")
              .append(w == Who.PLAIN ? "1" : String.format(Locale.ROOT, "%.3f", med)).append(" | ")
              .append(w == Who.PLAIN ? "–" : String.format(Locale.ROOT, "%.3f–%.3f", ci[0], ci[1]))
              .append(" |\n");
          if (w != Who.PLAIN && w != Who.PLAIN_SETTINGS && med > 1.1) {
            slower.add(mode.value() + ": " + w.label + " costs " + String.format(Locale.ROOT, "%.3f", med)
                + "× the limit per read-only transaction (target ≤ 1.1×)");
          }
        }
        md.append('\n');
      } finally {
        sources.values().forEach(Contender::close);
      }
    }
    return md.toString();
  }

  private static final Map<Boolean, double[]> PLAIN_COUNTS = new LinkedHashMap<>();

  /** The three contenders on the bouncers reached at {@code primary} and {@code replica}. */
  private static Map<Who, DataSource> open(BenchCluster c, String primary, String replica, String suffix)
      throws Exception {
    String db = c.database();
    Map<Who, DataSource> m = new LinkedHashMap<>();
    // reads on the replica's bouncer, writes on the primary's: a pool each, as an application has
    m.put(Who.PLAIN, new PlainPools(plainPool("bench-plain-read" + suffix, replica, c),
        plainPool("bench-plain-write" + suffix, primary, c)));
    String url = Contender.omniumUrl(primary, replica, db) + "&" + PGJDBC;
    m.put(Who.OMNIUM_DRIVER, Contender.pool("bench-omnium" + suffix, url,
        OmniumDriver.class.getName(), new Properties(), true, c));
    OmniumDataSource ds = new OmniumDataSource(url.replace("applicationName=" + Contender.APP,
        "applicationName=" + Contender.APP + "ds"));
    ds.setUser(c.user());
    m.put(Who.OMNIUM_DATASOURCE, ds);
    for (Map.Entry<Who, DataSource> e : m.entrySet()) {
      Workloads.awaitReadsOn(e.getValue(), "replica", Duration.ofSeconds(60), e.getKey().label);
    }
    return m;
  }

  /** Plain pgjdbc through the bouncer at {@code hostPort}, with {@link #PGJDBC} only. */
  private static HikariDataSource plainPool(String name, String hostPort, BenchCluster c) {
    Properties plain = new Properties();
    plain.setProperty("prepareThreshold", "0");
    plain.setProperty("ApplicationName", "bench-plain");
    return Contender.pool(name, "jdbc:postgresql://" + hostPort + "/" + c.database(), null, plain, true, c);
  }

  private static void warm(DataSource ds) throws Exception {
    Workloads.warm(ds, Contender.POOL_SIZE, Workloads.WARM_ROUNDS);
    Workloads.warmWrites(writesOf(ds), Contender.POOL_SIZE);
  }

  /** Where {@code ds}'s write transactions go: plain pgjdbc's primary pool, omnium itself. */
  private static DataSource writesOf(DataSource ds) {
    return ds instanceof PlainPools pp ? pp.writes : ds;
  }

  /** Round trips and logins per unit of work of {@code who}, its own sessions only. */
  private static double[] count(DataSource ds, int tx, boolean write, WireCounter pw, WireCounter rw,
      PgBouncer primary, PgBouncer replica, Who who) throws Exception {
    Map<String, Long> p0 = pw.roundTrips();
    Map<String, Long> r0 = rw.roundTrips();
    long l0 = logins(primary) + logins(replica);
    for (int i = 0; i < tx; i++) {
      if (write) {
        Workloads.writeTx(writesOf(ds), i);
      } else {
        Workloads.readTx(ds, 1 + i % BenchCluster.ROWS);
      }
    }
    long logins = logins(primary) + logins(replica) - l0;
    long trips = ownTrips(p0, pw.roundTrips()) + ownTrips(r0, rw.roundTrips());
    return new double[] {trips / (double) tx, logins / (double) tx};
  }

  /**
   * Round trips of the measured sessions: not omnium's background sessions' (the lag watcher's
   * {@code :watcher}, the WAL sampler's {@code :sampler}, a heartbeat writer's {@code :heartbeat}).
   */
  private static long ownTrips(Map<String, Long> before, Map<String, Long> after) {
    long n = 0;
    for (Map.Entry<String, Long> e : after.entrySet()) {
      String app = e.getKey();
      if (app.endsWith(":watcher") || app.endsWith(":sampler") || app.endsWith(":heartbeat")
          || app.startsWith("bench-control")) continue;
      n += e.getValue() - before.getOrDefault(app, 0L);
    }
    return n;
  }

  private static long logins(PgBouncer b) {
    return b.log().lines().filter(l -> l.contains("login attempt:")).count();
  }

  private static String bouncerVersion() {
    try {
      Process p = new ProcessBuilder(PgBouncer.binary(), "--version").redirectErrorStream(true).start();
      String first = new String(p.getInputStream().readAllBytes()).lines().findFirst().orElse("");
      p.waitFor();
      return first.replace("PgBouncer ", "").trim();
    } catch (Exception e) {
      return "(version unknown)";
    }
  }

  /** Plain pgjdbc as an application uses it: reads from one pool, writes from another. */
  static final class PlainPools implements DataSource, AutoCloseable {
    private final HikariDataSource reads;
    final HikariDataSource writes;

    PlainPools(HikariDataSource reads, HikariDataSource writes) {
      this.reads = reads;
      this.writes = writes;
    }

    /** A read-only transaction's connection (the replica's bouncer). */
    @Override
    public Connection getConnection() throws SQLException {
      return reads.getConnection();
    }

    @Override
    public Connection getConnection(String u, String p) throws SQLException {
      return getConnection();
    }

    @Override public PrintWriter getLogWriter() { return null; }
    @Override public void setLogWriter(PrintWriter out) { }
    @Override public void setLoginTimeout(int seconds) { }
    @Override public int getLoginTimeout() { return 0; }
    @Override public Logger getParentLogger() { return Logger.getGlobal(); }
    @Override public <T> T unwrap(Class<T> iface) { throw new UnsupportedOperationException(); }
    @Override public boolean isWrapperFor(Class<?> iface) { return false; }

    @Override
    public void close() {
      reads.close();
      writes.close();
    }
  }
}
