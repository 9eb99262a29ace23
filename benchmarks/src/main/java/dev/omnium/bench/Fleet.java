package dev.omnium.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.sandbox.Heartbeat;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A fleet of application processes against one primary and one replica: what each JDBC stack
 * costs the servers per process, as a function of the number of processes (issue 34).
 *
 * <p>Every process is a JVM of its own with a small heap ({@code -Xmx64m
 * -XX:TieredStopAtLevel=1 -XX:+UseSerialGC}), one HikariCP pool of at most {@value #APP_POOL}
 * connections and the same URL as every other process of its contender. It runs
 * {@value #WRITES} writes and {@value #READS} sequential read-only transactions, then idles, then
 * runs one read-only transaction every {@value #LOAD_PERIOD_MS} ms (the light load). The servers
 * are asked, not the processes: sessions from {@code pg_stat_activity}, and transactions per second
 * from {@code pg_stat_database} ({@code xact_commit + xact_rollback} deltas of the benchmark
 * database; no extension needed), less what the cluster does with no process running (the
 * harness's heartbeat writer). A session counts as the application's own when a process saw its
 * pid through its pool (all {@value #APP_POOL} connections borrowed at once, and every read);
 * every other session of the benchmark database is the driver's own, named by
 * {@code application_name}. omnium's replica and fallback sessions are lent per transaction and
 * go back to omnium's pools, so they are never the application's.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.omnium.bench.Fleet [--processes 1,10,40]
 *     [--contenders PGJDBC,AWS_WRAPPER,OMNIUM,OMNIUM_WRITER] [--idle-settle 100s] [--window 30s]
 *     [--load-settle 10s] [--out file.md]
 * </pre>
 *
 * <p>{@code --idle-settle} is how long the processes idle before the idle window: longer than
 * omnium's {@code poolIdleTimeout} (default 1m) plus HikariCP's 30 s housekeeping period, so the
 * internal pools have shrunk. A process is started as {@code Fleet --member ...} by the harness.
 */
public final class Fleet {
  static final int APP_POOL = 4;
  static final int WRITES = 50;
  static final int READS = 200;
  static final int LOAD_PERIOD_MS = 100;
  static final String APP = "fleet";
  static final String[] MEMBER_JVM = {"-Xmx64m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"};
  /** The harness's heartbeat writer, "written elsewhere" for omnium: the default interval. */
  static final Duration HEARTBEAT = Duration.ofSeconds(1);

  /** The JDBC stacks a process may use. */
  enum Stack {
    PGJDBC("plain pgjdbc (everything on the primary)"),
    AWS_WRAPPER("AWS Advanced JDBC Wrapper 4.3.0 (`readWriteSplitting,efm2`)"),
    OMNIUM("omnium, a fleet member (heartbeat written elsewhere)"),
    OMNIUM_WRITER("omnium with `heartbeatWriter=true`");

    final String label;

    Stack(String label) {
      this.label = label;
    }

    String url(String primary, String replica, String db) {
      switch (this) {
        case PGJDBC:
          return "jdbc:postgresql://" + primary + "/" + db + "?ApplicationName=" + APP;
        case AWS_WRAPPER:
          return "jdbc:aws-wrapper:postgresql://" + primary + "," + replica + "/" + db
              + "?ApplicationName=" + APP;
        case OMNIUM:
          return "jdbc:omnium:postgresql://" + primary + "/" + db + "?replica=" + replica
              + "&applicationName=" + APP;
        case OMNIUM_WRITER:
          return OMNIUM.url(primary, replica, db) + "&heartbeatWriter=true";
        default:
          throw new AssertionError(this);
      }
    }

    /** Whether sessions under the application's read-only work stay held by its connections. */
    boolean readsHeldByApplication() {
      return this == PGJDBC || this == AWS_WRAPPER;
    }
  }

  /** What the servers showed for one stack and number of processes. */
  static final class Run {
    final Stack stack;
    final int processes;
    /** Per server ("primary", "replica"), per phase ("idle", "load"). */
    final Map<String, Sessions> sessions = new LinkedHashMap<>();
    /** Statements per second, per server and phase: all, and the driver's own by role. */
    final Map<String, Statements> statements = new LinkedHashMap<>();
    /** Sessions opened after the load started, per server, all processes together. */
    final Map<String, Integer> loadConnects = new LinkedHashMap<>();
    final List<Long> firstReadMicros = new ArrayList<>();
    int errors;

    Run(Stack stack, int processes) {
      this.stack = stack;
      this.processes = processes;
    }
  }

  /** Sessions of the benchmark database on one server, the harness's own left out. */
  static final class Sessions {
    int all;
    int application;
    /** The driver's own sessions, by application_name. */
    final Map<String, Integer> own = new TreeMap<>();

    int own() {
      return all - application;
    }

    /** The larger of two snapshots (per role: each role's own maximum). */
    void max(Sessions s) {
      all = Math.max(all, s.all);
      application = Math.max(application, s.application);
      s.own.forEach((k, v) -> own.merge(k, v, Math::max));
    }
  }

  /** Statements the server logged during a window (log_statement=all), per second. */
  static final class Statements {
    double all;
    double application;
    /** The driver's own statements per second, by application_name. */
    final Map<String, Double> own = new TreeMap<>();
    /** The application's statements per second, by what they began with (the log only). */
    final Map<String, Double> applicationSql = new TreeMap<>();

    double own() {
      return all - application;
    }
  }

  private final PgCluster cluster;
  private final Path jar;
  private final Path logs;
  private final Duration idleSettle;
  private final Duration window;
  private final Duration loadSettle;
  /** The harness's own sessions (the heartbeat writer), per server port: never counted. */
  private final Map<Integer, Set<Integer>> harnessPids = new LinkedHashMap<>();

  private Fleet(PgCluster cluster, Path jar, Path logs, Duration idleSettle, Duration window,
      Duration loadSettle) {
    this.cluster = cluster;
    this.jar = jar;
    this.logs = logs;
    this.idleSettle = idleSettle;
    this.window = window;
    this.loadSettle = loadSettle;
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--member")) {
      Member.main(Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    List<Integer> processes = List.of(1, 10, 40);
    List<Stack> stacks = List.of(Stack.values());
    Duration idleSettle = Duration.ofSeconds(100);
    Duration window = Duration.ofSeconds(30);
    Duration loadSettle = Duration.ofSeconds(10);
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--processes":
          processes = new ArrayList<>();
          for (String s : args[++i].split(",")) processes.add(Integer.parseInt(s.trim()));
          break;
        case "--contenders":
          stacks = new ArrayList<>();
          for (String s : args[++i].split(",")) stacks.add(Stack.valueOf(s.trim()));
          break;
        case "--idle-settle": idleSettle = duration(args[++i]); break;
        case "--window": window = duration(args[++i]); break;
        case "--load-settle": loadSettle = duration(args[++i]); break;
        case "--out": out = Path.of(args[++i]); break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path jar = Path.of(Fleet.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path logs = Files.createTempDirectory("omnium-fleet-");
    System.out.println("fleet: process logs in " + logs + " (deleted after a successful run)");
    int maxProcesses = processes.stream().mapToInt(Integer::intValue).max().orElse(1);
    // room for every process's sessions before the fix too (4 held + 9 own), and the harness
    String maxConnections = Integer.toString(Math.max(100, 16 * maxProcesses + 20));
    long started = System.nanoTime();
    Instant at = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    try (PgCluster cluster = PgCluster.builder().replicas(1)
        .version(System.getProperty("omnium.pg.version", "18"))
        .setting("max_connections", maxConnections)
        // every statement a server runs, with its session's database and application_name
        .setting("log_statement", "all")
        .setting("log_line_prefix", LOG_PREFIX).start()) {
      prepare(cluster);
      try (Heartbeat hb = Heartbeat.start(cluster, HEARTBEAT)) {
        Fleet fleet = new Fleet(cluster, jar, logs, idleSettle, window, loadSettle);
        fleet.harnessSessions();
        List<Run> runs = new ArrayList<>();
        for (int n : processes) {
          for (Stack s : stacks) {
            Run r = fleet.run(s, n);
            runs.add(r);
            System.out.println(summary(r));
          }
        }
        String md = fleet.markdown(runs, at, (System.nanoTime() - started) / 1_000_000_000L,
            maxConnections, processes, stacks);
        if (out == null) {
          System.out.println(md);
        } else {
          Files.writeString(out, md);
          System.out.println("written " + out);
        }
      }
    }
    // kept only when the run failed (an exception left before this line)
    try (var files = Files.list(logs)) {
      for (Path f : (Iterable<Path>) files::iterator) Files.delete(f);
    }
    Files.delete(logs);
  }

  static Duration duration(String s) {
    if (s.endsWith("ms")) return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
    if (s.endsWith("s")) return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1)));
    if (s.endsWith("m")) return Duration.ofMinutes(Long.parseLong(s.substring(0, s.length() - 1)));
    return Duration.ofMillis(Long.parseLong(s));
  }

  private static void prepare(PgCluster cluster) throws SQLException {
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE fleet_read (id int PRIMARY KEY, v bigint NOT NULL)");
      st.execute("INSERT INTO fleet_read SELECT g, g * 7 FROM generate_series(1, 1000) g");
      st.execute("CREATE TABLE fleet_write (id bigserial PRIMARY KEY, v int NOT NULL)");
    }
    Heartbeat.createTable(cluster); // also waits until the replica has the tables
  }

  private Connection control(PgNode node) throws SQLException {
    // the postgres database: the harness's own queries do not count in the benchmark database
    Properties p = new Properties();
    p.setProperty("user", cluster.user());
    p.setProperty("ApplicationName", "fleet-control");
    p.setProperty("assumeMinServerVersion", "9.0");
    return DriverManager.getConnection("jdbc:postgresql://" + node.hostPort() + "/postgres", p);
  }

  private void harnessSessions() throws Exception {
    for (PgNode node : nodes()) {
      Set<Integer> pids = new HashSet<>();
      try (Connection c = control(node); Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT pid FROM pg_stat_activity WHERE datname = '"
               + cluster.database() + "'")) {
        while (rs.next()) pids.add(rs.getInt(1));
      }
      harnessPids.put(node.port(), pids);
    }
  }

  private List<PgNode> nodes() {
    return List.of(cluster.primary(), cluster.replica(0));
  }

  private static String server(PgNode node) {
    return node.isPrimary() ? "primary" : "replica";
  }

  /** Log prefix: time, pid, then database and application_name between bars. */
  static final String LOG_PREFIX = "%m [%p] %q|%d|%a| ";
  private static final Pattern STATEMENT = Pattern.compile(
      "^\\S+ \\S+ \\S+ \\[(\\d+)\\] \\|([^|]*)\\|([^|]*)\\| LOG:  (?:statement|execute [^:]*):");

  private Map<String, Long> logOffsets() throws IOException {
    Map<String, Long> m = new LinkedHashMap<>();
    for (PgNode node : nodes()) m.put(server(node), Files.size(node.logFile()));
    return m;
  }

  /**
   * The statements each server logged since {@code offsets}, per second of {@code secs}: those of
   * the benchmark database, the harness's own left out; the application's (a pid it reported)
   * apart from the driver's own, which are counted by application_name.
   */
  private Map<String, Statements> statementsSince(Map<String, Long> offsets, double secs,
      Set<String> held) throws IOException {
    Map<String, Statements> m = new LinkedHashMap<>();
    for (PgNode node : nodes()) {
      Statements st = new Statements();
      byte[] bytes;
      try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(node.logFile().toFile(), "r")) {
        long from = offsets.get(server(node));
        bytes = new byte[(int) Math.max(0, f.length() - from)];
        f.seek(from);
        f.readFully(bytes);
      }
      for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
        Matcher mt = STATEMENT.matcher(line);
        if (!mt.find() || !mt.group(2).equals(cluster.database())) continue;
        int pid = Integer.parseInt(mt.group(1));
        if (harnessPids.get(node.port()).contains(pid)) continue;
        st.all += 1 / secs;
        if (held.contains(node.port() + ":" + pid)) {
          st.application += 1 / secs;
          String sql = line.substring(mt.end()).trim();
          st.applicationSql.merge(sql.substring(0, Math.min(40, sql.length())), 1 / secs,
              Double::sum);
        } else {
          st.own.merge(mt.group(3), 1 / secs, Double::sum);
        }
      }
      m.put(server(node), st);
    }
    return m;
  }

  /** Server time now, per server, as epoch seconds. */
  private Map<String, Double> serverNow() throws SQLException {
    Map<String, Double> m = new LinkedHashMap<>();
    for (PgNode node : nodes()) {
      try (Connection c = control(node); Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT extract(epoch FROM clock_timestamp())::float8")) {
        rs.next();
        m.put(server(node), rs.getDouble(1));
      }
    }
    return m;
  }

  /**
   * Sessions of the benchmark database per server, the harness's own left out; a session counts as
   * the application's when a process reported its pid. With {@code since}, also the number of
   * sessions that started after that server time.
   */
  private Map<String, Sessions> sessions(Set<String> held, Map<String, Double> since,
      Map<String, Set<Integer>> newPids) throws SQLException {
    Map<String, Sessions> m = new LinkedHashMap<>();
    for (PgNode node : nodes()) {
      Sessions s = new Sessions();
      try (Connection c = control(node); PreparedStatement ps = c.prepareStatement(
          "SELECT pid, coalesce(application_name, ''), extract(epoch FROM backend_start)::float8"
              + " FROM pg_stat_activity WHERE datname = ? AND backend_type = 'client backend'")) {
        ps.setString(1, cluster.database());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            int pid = rs.getInt(1);
            if (harnessPids.get(node.port()).contains(pid)) continue;
            s.all++;
            if (held.contains(node.port() + ":" + pid)) {
              s.application++;
            } else {
              s.own.merge(rs.getString(2), 1, Integer::sum);
            }
            if (since != null && rs.getDouble(3) >= since.get(server(node))) {
              newPids.computeIfAbsent(server(node), k -> new HashSet<>()).add(pid);
            }
          }
        }
      }
      m.put(server(node), s);
    }
    return m;
  }

  /** One stack with {@code n} processes: work, idle, light load; measured on the servers. */
  private Run run(Stack stack, int n) throws Exception {
    Run run = new Run(stack, n);
    System.out.printf(Locale.ROOT, "fleet: %s with %d process(es)%n", stack, n);
    List<Process> procs = new ArrayList<>();
    List<BlockingQueue<String>> outs = new ArrayList<>();
    List<PrintWriter> ins = new ArrayList<>();
    Set<String> held = new HashSet<>();
    try {
      String url = stack.url(cluster.primary().hostPort(), cluster.replica(0).hostPort(),
          cluster.database());
      for (int i = 0; i < n; i++) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(MEMBER_JVM));
        cmd.addAll(List.of("-cp", jar.toString(), Fleet.class.getName(), "--member", stack.name(),
            url, cluster.user()));
        ProcessBuilder pb = new ProcessBuilder(cmd)
            .redirectError(logs.resolve(stack + "-" + n + "-" + i + ".log").toFile());
        Process p = pb.start();
        procs.add(p);
        BlockingQueue<String> q = new LinkedBlockingQueue<>();
        outs.add(q);
        ins.add(new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8));
        Thread reader = new Thread(() -> {
          try (BufferedReader r = new BufferedReader(
              new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) q.add(line);
          } catch (IOException ignored) {
            // the process ended
          }
          q.add("EXIT");
        }, "fleet-member-" + i);
        reader.setDaemon(true);
        reader.start();
      }
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      for (int i = 0; i < n; i++) {
        while (true) {
          String line = next(outs.get(i), deadline, stack, i);
          if (line.startsWith("HELD ")) {
            held.addAll(Arrays.asList(line.substring(5).trim().split(",")));
          } else if (line.equals("READY")) {
            break;
          }
        }
      }
      held.remove("");
      System.out.println("fleet: all " + n + " process(es) ready; idling " + idleSettle);
      sleep(idleSettle);
      measureWindow(run, "idle", held, null);
      Map<String, Double> loadStart = serverNow();
      for (PrintWriter in : ins) in.println("LOAD");
      for (int i = 0; i < n; i++) {
        while (true) {
          String line = next(outs.get(i), System.nanoTime() + TimeUnit.MINUTES.toNanos(2), stack,
              i);
          if (line.startsWith("FIRST ")) {
            run.firstReadMicros.add(Long.parseLong(line.substring(6).trim()));
            break;
          }
          if (line.startsWith("HELD ")) {
            held.addAll(Arrays.asList(line.substring(5).trim().split(",")));
          }
        }
      }
      sleep(loadSettle);
      measureWindow(run, "load", held, loadStart);
      for (PrintWriter in : ins) in.println("STOP");
      for (int i = 0; i < n; i++) {
        while (true) {
          String line = next(outs.get(i), System.nanoTime() + TimeUnit.MINUTES.toNanos(1), stack,
              i);
          if (line.startsWith("ERRORS ")) {
            run.errors += Integer.parseInt(line.substring(7).trim());
          } else if (line.startsWith("HELD ")) {
            held.addAll(Arrays.asList(line.substring(5).trim().split(",")));
          } else if (line.equals("EXIT")) {
            break;
          }
        }
      }
    } finally {
      for (Process p : procs) {
        if (!p.waitFor(20, TimeUnit.SECONDS)) p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    awaitNoSessions();
    return run;
  }

  private static String next(BlockingQueue<String> q, long deadlineNanos, Stack stack, int i)
      throws InterruptedException {
    String line = q.poll(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    if (line == null) {
      throw new IllegalStateException("fleet: process " + i + " of " + stack + " did not answer");
    }
    if (line.startsWith("FAILED")) {
      throw new IllegalStateException("fleet: process " + i + " of " + stack + ": " + line);
    }
    return line;
  }

  private void measureWindow(Run run, String phase, Set<String> held, Map<String, Double> since)
      throws Exception {
    Map<String, Set<Integer>> newPids = new LinkedHashMap<>();
    Map<String, Sessions> most = sessions(held, since, newPids);
    Map<String, Long> offsets = logOffsets();
    long t0 = System.nanoTime();
    long end = t0 + window.toNanos();
    while (System.nanoTime() < end) {
      sleep(Duration.ofMillis(Math.min(2000, Math.max(1, (end - System.nanoTime()) / 1_000_000))));
      Map<String, Sessions> now = sessions(held, since, newPids);
      for (String server : now.keySet()) most.get(server).max(now.get(server));
    }
    double secs = (System.nanoTime() - t0) / 1e9;
    Map<String, Statements> statements = statementsSince(offsets, secs, held);
    for (String server : most.keySet()) {
      run.sessions.put(server + " " + phase, most.get(server));
      run.statements.put(server + " " + phase, statements.get(server));
      if (since != null) {
        run.loadConnects.put(server, newPids.getOrDefault(server, Set.of()).size());
      }
    }
  }

  private void awaitNoSessions() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      int left = 0;
      for (Sessions s : sessions(Set.of(), null, null).values()) left += s.all;
      if (left == 0) return;
      sleep(Duration.ofMillis(200));
    }
    System.out.println("fleet: sessions still open 60 s after the processes ended");
  }

  private static void sleep(Duration d) throws InterruptedException {
    Thread.sleep(Math.max(0, d.toMillis()));
  }

  static String summary(Run r) {
    StringBuilder b = new StringBuilder("fleet: ").append(r.stack).append(" n=").append(r.processes);
    for (Map.Entry<String, Sessions> e : r.sessions.entrySet()) {
      Statements st = r.statements.get(e.getKey());
      b.append(" | ").append(e.getKey()).append(": ").append(e.getValue().all).append(" sessions (own ")
          .append(e.getValue().own()).append(' ').append(e.getValue().own).append("), ")
          .append(String.format(Locale.ROOT, "%.1f", st.all)).append(" statements/s (own ")
          .append(rates(st.own, 1)).append("; application ").append(rates(st.applicationSql, 1))
          .append(')');
    }
    b.append(" | connects under load ").append(r.loadConnects).append(" | errors ").append(r.errors);
    return b.toString();
  }

  // ---- the report ----

  private String markdown(List<Run> runs, Instant at, long seconds, String maxConnections,
      List<Integer> processes, List<Stack> stacks) {
    StringBuilder b = new StringBuilder();
    b.append("<!-- fleet run ").append(at).append(' ').append(seconds).append(" s -->\n");
    for (Run r : runs) {
      for (String key : r.sessions.keySet()) {
        Sessions s = r.sessions.get(key);
        Statements st = r.statements.get(key);
        // machine-readable: stack processes server:phase sessions(all application own)
        // statements/s(all own)
        b.append(String.format(Locale.ROOT, "<!-- fleet %s %d %s %d %d %d %.2f %.2f -->%n", r.stack,
            r.processes, key.replace(' ', ':'), s.all, s.application, s.own(), st.all, st.own()));
      }
    }
    b.append("### A fleet of processes\n\n");
    b.append("Run of ").append(at).append(" (").append(seconds).append(" s), `benchmarks/fleet.sh`: ")
        .append("PostgreSQL ").append(cluster.version()).append(" primary and one streaming replica, ")
        .append("`max_connections=").append(maxConnections).append("`, a heartbeat row written every ")
        .append(HEARTBEAT.toSeconds()).append(" s by the harness. Each process is a JVM (`")
        .append(String.join(" ", MEMBER_JVM)).append("`) with one HikariCP pool of at most ")
        .append(APP_POOL).append(" connections and the stack's URL, the same in every process: ")
        .append(WRITES).append(" writes and ").append(READS).append(" sequential read-only ")
        .append("transactions, then idle for ").append(idleSettle.toSeconds()).append(" s before the ")
        .append("idle window, then one read-only transaction every ").append(LOAD_PERIOD_MS)
        .append(" ms (light load). *Sessions*: `pg_stat_activity` of the benchmark database, the ")
        .append("most seen during a ").append(window.toSeconds()).append(" s window, sampled every ")
        .append("2 s; *held* are those under the application's pool (every pid a process saw through ")
        .append("its ").append(APP_POOL).append(" pooled connections borrowed at once, and through ")
        .append("its reads where the stack keeps the read session with the connection), *own* every ")
        .append("other one, named by `application_name`. *Statements*: what each server logged ")
        .append("(`log_statement=all`) during the window, per second: every simple query and every ")
        .append("execute of the extended protocol (pgjdbc's `BEGIN` and `COMMIT` included), the ")
        .append("harness's own left out; *own* are those of the driver's own sessions. ")
        .append("`pg_stat_database`'s transaction counters would need no log, but a session whose ")
        .append("queries touch no table (omnium's WAL sampler) never flushes them.\n\n");

    int first = processes.get(0);
    b.append("#### Per idle process (").append(first).append(first == 1 ? " process" : " processes")
        .append(")\n\n");
    b.append("Sessions the application's pool does not hold and their statements per second, per ")
        .append("process, after the pools shrank.\n\n");
    b.append("| stack | own sessions on the primary | own sessions on the replica | own statements/s ")
        .append("on the primary | own statements/s on the replica |\n|---|---|---|---|---|\n");
    for (Stack s : stacks) {
      Run r = find(runs, s, first);
      if (r == null) continue;
      b.append("| ").append(s.label).append(" | ").append(perProcess(r, "primary idle"))
          .append(" | ").append(perProcess(r, "replica idle")).append(" | ")
          .append(statementsPerProcess(r, "primary idle")).append(" | ")
          .append(statementsPerProcess(r, "replica idle")).append(" |\n");
    }
    b.append('\n');

    b.append("#### As a function of the number of processes\n\n");
    b.append("All processes together, *all* / *own*: sessions on each server, and statements per ")
        .append("second, idle and under the light load (whose application part is ")
        .append(1000 / LOAD_PERIOD_MS).append(" read-only transactions per second per process, ")
        .append("three statements each); *connects* are sessions opened after the light load ")
        .append("started (the first read after the idle period included), *first read* the median ")
        .append("time of each process's first read-only transaction after the idle period.\n\n");
    b.append("| stack | processes | sessions idle, primary | sessions idle, replica | statements/s ")
        .append("idle, primary | statements/s idle, replica | sessions under load, primary | ")
        .append("sessions under load, replica | statements/s under load, primary | statements/s ")
        .append("under load, replica | connects under load (primary, replica) | first read | ")
        .append("errors |\n");
    b.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Stack s : stacks) {
      for (int n : processes) {
        Run r = find(runs, s, n);
        if (r == null) continue;
        b.append("| ").append(s.label).append(" | ").append(n);
        for (String key : List.of("primary idle", "replica idle")) {
          b.append(" | ").append(allOwn(r, key));
        }
        for (String key : List.of("primary idle", "replica idle")) {
          b.append(" | ").append(statementsAllOwn(r, key));
        }
        for (String key : List.of("primary load", "replica load")) {
          b.append(" | ").append(allOwn(r, key));
        }
        for (String key : List.of("primary load", "replica load")) {
          b.append(" | ").append(statementsAllOwn(r, key));
        }
        b.append(" | ").append(r.loadConnects.getOrDefault("primary", 0)).append(", ")
            .append(r.loadConnects.getOrDefault("replica", 0)).append(" | ")
            .append(median(r.firstReadMicros)).append(" | ").append(r.errors).append(" |\n");
      }
    }
    b.append('\n');

    if (processes.size() > 1) {
      b.append("#### Growth per process\n\n");
      b.append("Least-squares slope over ").append(processes).append(" processes: what one more ")
          .append("process adds.\n\n");
      b.append("| stack | own sessions, primary (idle) | own sessions, replica (idle) | own ")
          .append("statements/s, primary (idle) | own statements/s, replica (idle) | statements/s, ")
          .append("primary (load) | statements/s, replica (load) |\n")
          .append("|---|---:|---:|---:|---:|---:|---:|\n");
      for (Stack s : stacks) {
        b.append("| ").append(s.label);
        b.append(" | ").append(slope(runs, s, processes, r -> r.sessions.get("primary idle").own()));
        b.append(" | ").append(slope(runs, s, processes, r -> r.sessions.get("replica idle").own()));
        b.append(" | ").append(slope(runs, s, processes,
            r -> r.statements.get("primary idle").own()));
        b.append(" | ").append(slope(runs, s, processes,
            r -> r.statements.get("replica idle").own()));
        b.append(" | ").append(slope(runs, s, processes, r -> r.statements.get("primary load").all));
        b.append(" | ").append(slope(runs, s, processes, r -> r.statements.get("replica load").all));
        b.append(" |\n");
      }
      b.append('\n');
    }
    return b.toString();
  }

  private static Run find(List<Run> runs, Stack s, int n) {
    for (Run r : runs) if (r.stack == s && r.processes == n) return r;
    return null;
  }

  private static String perProcess(Run r, String key) {
    Sessions s = r.sessions.get(key);
    StringBuilder b = new StringBuilder(num(s.own() / (double) r.processes));
    if (!s.own.isEmpty()) {
      b.append(" (");
      boolean firstRole = true;
      for (Map.Entry<String, Integer> e : s.own.entrySet()) {
        b.append(firstRole ? "" : ", ").append('`').append(e.getKey().isEmpty() ? "(none)"
            : e.getKey()).append("` ").append(num(e.getValue() / (double) r.processes));
        firstRole = false;
      }
      b.append(')');
    }
    return b.toString();
  }

  private static String allOwn(Run r, String key) {
    Sessions s = r.sessions.get(key);
    return s.all + " / " + s.own();
  }

  private static String statementsPerProcess(Run r, String key) {
    Statements st = r.statements.get(key);
    String roles = rates(st.own, r.processes);
    return String.format(Locale.ROOT, "%.2f", st.own() / r.processes)
        + (roles.isEmpty() ? "" : " (" + roles + ")");
  }

  private static String statementsAllOwn(Run r, String key) {
    Statements st = r.statements.get(key);
    return String.format(Locale.ROOT, "%.1f / %.1f", st.all, st.own());
  }

  /** {@code `role` rate, ...}, each rate divided by {@code processes}. */
  private static String rates(Map<String, Double> byRole, int processes) {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, Double> e : byRole.entrySet()) {
      b.append(b.length() == 0 ? "" : ", ").append('`')
          .append(e.getKey().isEmpty() ? "(none)" : e.getKey()).append("` ")
          .append(String.format(Locale.ROOT, "%.2f", e.getValue() / processes));
    }
    return b.toString();
  }

  /** A count per process: whole numbers as such, else two decimals. */
  static String num(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
  }

  private static String median(List<Long> micros) {
    if (micros.isEmpty()) return "–";
    List<Long> sorted = new ArrayList<>(micros);
    sorted.sort(null);
    long m = sorted.get(sorted.size() / 2);
    return m >= 10_000 ? String.format(Locale.ROOT, "%.1f ms", m / 1000.0) : m + " µs";
  }

  private static String slope(List<Run> runs, Stack s, List<Integer> processes,
      java.util.function.ToDoubleFunction<Run> value) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int k = 0;
    for (int n : processes) {
      Run r = find(runs, s, n);
      if (r == null) continue;
      double y = value.applyAsDouble(r);
      sx += n;
      sy += y;
      sxx += (double) n * n;
      sxy += n * y;
      k++;
    }
    double den = k * sxx - sx * sx;
    if (k < 2 || den == 0) return "–";
    return String.format(Locale.ROOT, "%.2f", (k * sxy - sx * sy) / den);
  }

  /** One application process of the fleet. */
  static final class Member {
    private final Stack stack;
    private final HikariDataSource pool;
    private final Set<String> held = new HashSet<>();
    private int errors;

    private Member(Stack stack, String url, String user) {
      this.stack = stack;
      HikariConfig hc = new HikariConfig();
      hc.setPoolName(APP);
      hc.setJdbcUrl(url);
      hc.setUsername(user);
      hc.setMaximumPoolSize(APP_POOL);
      if (stack == Stack.AWS_WRAPPER) {
        hc.setDriverClassName("software.amazon.jdbc.Driver");
        Properties p = new Properties();
        p.setProperty("wrapperPlugins", "readWriteSplitting,efm2");
        p.setProperty("wrapperDialect", "pg");
        // not RDS: the topology is the URL's host list, whose first host is the one writer
        p.setProperty("singleWriterConnectionString", "true");
        hc.setDataSourceProperties(p);
      }
      this.pool = new HikariDataSource(hc);
    }

    static void main(String[] args) throws Exception {
      Stack stack = Stack.valueOf(args[0]);
      Member m;
      try {
        m = new Member(stack, args[1], args[2]);
        m.work();
      } catch (Exception e) {
        System.out.println("FAILED " + e);
        e.printStackTrace();
        System.exit(1);
        return;
      }
      m.serve();
    }

    private void work() throws SQLException {
      for (int i = 0; i < WRITES; i++) {
        try (Connection c = pool.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO fleet_write (v) VALUES (?)")) {
          ps.setInt(1, i);
          ps.executeUpdate();
        }
      }
      for (int i = 0; i < READS; i++) readTx();
      // every connection of the application's pool at once: the sessions it holds
      List<Connection> all = new ArrayList<>();
      try {
        for (int i = 0; i < APP_POOL; i++) all.add(pool.getConnection());
        for (Connection c : all) {
          try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
              "SELECT inet_server_port(), pg_backend_pid()")) {
            rs.next();
            held.add(rs.getInt(1) + ":" + rs.getInt(2));
          }
        }
      } finally {
        for (Connection c : all) c.close();
      }
      System.out.println("HELD " + String.join(",", held));
      System.out.println("READY");
    }

    private void readTx() throws SQLException {
      try (Connection c = pool.getConnection()) {
        c.setReadOnly(true);
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement(
            "SELECT v, inet_server_port(), pg_backend_pid() FROM fleet_read WHERE id = ?")) {
          ps.setInt(1, 1 + ThreadLocalRandom.current().nextInt(1000));
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (stack.readsHeldByApplication()) {
              String session = rs.getInt(2) + ":" + rs.getInt(3);
              if (held.add(session)) System.out.println("HELD " + session);
            }
          }
        }
        c.commit();
      }
    }

    private void serve() throws IOException {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
          StandardCharsets.UTF_8));
      String line = in.readLine();
      if ("LOAD".equals(line)) {
        Thread load = new Thread(this::load, "fleet-load");
        load.setDaemon(true);
        load.start();
        line = in.readLine();
      }
      System.out.println("ERRORS " + errors);
      pool.close();
      System.exit(0);
    }

    private void load() {
      long next = System.nanoTime();
      boolean first = true;
      while (true) {
        long t0 = System.nanoTime();
        try {
          readTx();
        } catch (SQLException e) {
          errors++;
          System.err.println("fleet: read failed: " + e);
        }
        if (first) {
          System.out.println("FIRST " + (System.nanoTime() - t0) / 1000);
          first = false;
        }
        next += TimeUnit.MILLISECONDS.toNanos(LOAD_PERIOD_MS);
        long wait = next - System.nanoTime();
        if (wait > 0) {
          try {
            TimeUnit.NANOSECONDS.sleep(wait);
          } catch (InterruptedException e) {
            return;
          }
        }
      }
    }
  }
}
