package dev.omnium.sandbox;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.postgresql.Driver;

/**
 * A disposable, real PostgreSQL primary with N streaming replicas on 127.0.0.1, for tests, demos
 * and benchmarks. No Docker: the servers run from PostgreSQL binaries bundled in this jar (or a
 * local install named by {@code OMNIUM_PG_BIN}), as the current user, or as {@code postgres} /
 * {@code nobody} when the JVM is root.
 *
 * <pre>{@code
 * try (PgCluster cluster = PgCluster.builder().replicas(1).start()) {
 *   try (Connection c = cluster.connect(cluster.primary())) { ... }
 *   cluster.awaitCaughtUp(cluster.replica(0));
 * }
 * }</pre>
 *
 * <p>{@link #start} returns once every replica streams from the primary. Every server stops on
 * {@link #close()}, at JVM exit (shutdown hook), and, should the JVM be killed, when any later
 * cluster starts (its directory records the owner JVM). Control methods throw the unchecked
 * {@link PgSandboxException}.
 */
public final class PgCluster implements AutoCloseable {

  private static final String DATABASE = "omnium";
  private static final String USER = "postgres";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration DEFAULT_AWAIT = Duration.ofSeconds(30);
  private static final Duration CMD_TIMEOUT = Duration.ofMinutes(2);
  private static final AtomicInteger SEQUENCE = new AtomicInteger();
  private static final AtomicInteger SIDECAR_SEQUENCE = new AtomicInteger();
  private static final Driver DRIVER = new Driver();

  private final PgBinaries bin;
  private final ServerUser user;
  private final Path dir;
  private final Path socketDir;
  private final String id;
  private final String password;
  private final Map<String, String> settings;
  /** Certificates of a TLS cluster, else null. */
  private final TlsFiles tls;
  /** initdb for this cluster alone: a system identifier no other sandbox cluster has. */
  private final boolean ownSystemIdentifier;
  private final PgServer primary;
  private final List<PgServer> replicas;
  /** PgBouncers and HAProxies started in front of the nodes, stopped before the servers. */
  private final List<Sidecar> sidecars = Collections.synchronizedList(new ArrayList<>());
  private final Object controlLock = new Object();
  private volatile boolean closed;

  private PgCluster(Builder b) {
    Trace t = new Trace("new cluster");
    this.bin = PgBinaries.resolve(b.version, b.localBin);
    this.user = ServerUser.current();
    this.password = b.requirePasswords ? randomPassword() : null;
    this.ownSystemIdentifier = b.ownSystemIdentifier;
    this.settings = PgConfig.defaults();
    Path base = SandboxDirs.base();
    t.step("binaries");
    OrphanReaper.reapAll(base);
    t.step("reaped");
    this.id = ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet();
    this.dir = FileTrees.mkdirs(base.resolve(id), "rwxr-xr-x");
    OrphanReaper.claim(dir);
    // A short socket path: Unix socket paths are limited to ~107 bytes.
    this.socketDir = FileTrees.mkdirs(dir.resolve("s"), "rwx------");
    user.own(dir);
    this.tls = b.tls ? TlsFiles.make(dir.resolve("tls"), user) : null;
    if (tls != null) {
      settings.put("ssl", "on");
      settings.put("ssl_cert_file", tls.serverCert().toString());
      settings.put("ssl_key_file", tls.serverKey().toString());
    }
    this.settings.putAll(b.settings);
    this.primary = server("primary", true);
    List<PgServer> rs = new ArrayList<>();
    for (int i = 1; i <= b.replicas; i++) {
      rs.add(server("replica" + i, false));
    }
    this.replicas = Collections.unmodifiableList(rs);
  }

  private PgServer server(String name, boolean isPrimary) {
    PgNode node = new PgNode(name, DATABASE, dir.resolve(name + ".log"), isPrimary);
    node.port(Ports.free());
    return new PgServer(node, dir.resolve(name), bin, user);
  }

  /**
   * @return a builder with defaults: 1 replica, version from {@code omnium.pg.version}/{@code
   * OMNIUM_PG_VERSION} or 18, trust auth
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Copies a cached initdb template into every node, adds standby.signal and primary_conninfo to
   * the replicas, starts them all and waits until every replica streams. Copying the stopped
   * template is equivalent to copying the stopped primary: the primary's WAL continues from the
   * template's shutdown checkpoint, which is where the replicas start replaying.
   */
  private void boot() {
    Trace t = new Trace(id);
    t.step("prepared");
    Path template = ownSystemIdentifier ? DataTemplate.own(bin, user, dir.resolve("template"))
        : DataTemplate.get(bin, user);
    t.step("template");
    inParallel(all(), s -> copy(template, s.dataDir()));
    t.step("copied");
    for (PgServer s : all()) {
      Path conf = s.dataDir().resolve("postgresql.conf");
      try {
        Files.writeString(conf, PgConfig.common(settings), StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new PgSandboxException("cannot write " + conf + ": " + e, e);
      }
      user.writeFile(s.dataDir().resolve("pg_hba.conf"), PgConfig.hba(password != null,
          tls != null));
      writeNodeConfig(s, s == primary ? 0 : primary().port());
      if (s != primary) {
        user.writeFile(s.dataDir().resolve("standby.signal"), "");
      }
    }
    if (password != null) {
      setPasswordOffline(); // reaches the replicas through WAL
      t.step("password set");
    }
    int plannedPrimaryPort = primary().port();
    // Replicas need not wait for the primary: their WAL receivers retry every 100 ms.
    inParallel(all(), s -> startOnFreePort(s, s == primary ? 0 : plannedPrimaryPort));
    if (primary().port() != plannedPrimaryPort) {
      for (PgServer r : replicas) {
        writeNodeConfig(r, primary().port());
        query(r.node(), "SELECT pg_reload_conf()"); // primary_conninfo is reloadable (PG 13+)
      }
    }
    t.step("started");
    for (PgServer r : replicas) {
      awaitStreaming(r.node(), START_TIMEOUT);
    }
    t.step("streaming");
  }

  private void copy(Path from, Path to) {
    user.run(List.of("cp", "-a", from.toString(), to.toString()), CMD_TIMEOUT)
        .orThrow("copying a data directory");
  }

  /** Single-user mode sets the password before the first start, when SCRAM already guards TCP. */
  private void setPasswordOffline() {
    ProcessRunner.Result r = user.run(List.of(bin.postgres(), "--single", "-D",
        primary.dataDir().toString(), "-F", "postgres"), CMD_TIMEOUT,
        "ALTER ROLE " + USER + " PASSWORD '" + password + "';\n");
    if (!r.ok() || r.output().contains("ERROR:") || r.output().contains("FATAL:")) {
      throw new PgSandboxException("setting the superuser password failed: "
          + r.output().replace(password, "***").strip());
    }
  }

  private void writeNodeConfig(PgServer s, int primaryPort) {
    String clusterName = "omnium-" + id + "-" + s.node().name();
    user.writeFile(s.dataDir().resolve(PgConfig.NODE_FILE), PgConfig.node(clusterName,
        s.node().port(), socketDir.toString(), primaryPort, s.node().name(), password));
  }

  /** Ports are picked before binding, so another process may grab one first: then try another. */
  private void startOnFreePort(PgServer s, int primaryPort) {
    for (int attempt = 1; ; attempt++) {
      if (attempt > 1) {
        s.node().port(Ports.free());
      }
      writeNodeConfig(s, primaryPort);
      try {
        s.start();
        return;
      } catch (PgServer.PortTakenException e) {
        if (attempt >= 5) {
          throw e;
        }
      }
    }
  }

  // ---------------------------------------------------------------- accessors

  /** @return the primary */
  public PgNode primary() {
    return primary.node();
  }

  /**
   * @param index 0-based
   * @return replica {@code index} (named "replica" + (index + 1))
   */
  public PgNode replica(int index) {
    return replicas.get(index).node();
  }

  /** @return all replicas, in order */
  public List<PgNode> replicas() {
    return replicas.stream().map(PgServer::node).collect(Collectors.toUnmodifiableList());
  }

  /** @return "omnium", the database every node serves */
  public String database() {
    return DATABASE;
  }

  /** @return "postgres", the superuser */
  public String user() {
    return USER;
  }

  /** @return the superuser's password, or null when authentication is trust (the default) */
  public String password() {
    return password;
  }

  /**
   * @return the certificates of a TLS cluster ({@link Builder#tls()}): every TCP connection must
   *     then use TLS; null otherwise
   */
  public TlsFiles tls() {
    return tls;
  }

  /**
   * @return the system identifier every node of this cluster reports
   *     ({@code pg_control_system()}): the same for every cluster copied from the shared template,
   *     one of its own with {@link Builder#ownSystemIdentifier()}
   */
  public String systemIdentifier() {
    return query(primary(), "SELECT system_identifier FROM pg_control_system()");
  }

  /**
   * @return the server version, e.g. "18.1.0" (bundled) or what a local install reports, e.g.
   * "15.14"
   */
  public String version() {
    return bin.version();
  }

  /**
   * @return a ready-to-use omnium driver URL, e.g.
   *     {@code jdbc:omnium:postgresql://127.0.0.1:5433/omnium?replica=127.0.0.1:5434}
   */
  public String omniumUrl() {
    String url = "jdbc:omnium:postgresql://" + primary().hostPort() + "/" + DATABASE;
    if (replicas.isEmpty()) {
      return url;
    }
    return url + "?replica=" + replicas().stream().map(PgNode::hostPort)
        .collect(Collectors.joining(","));
  }

  // ---------------------------------------------------------------- connections

  /**
   * Opens a superuser connection (pgjdbc, autocommit) to a node.
   *
   * @param node a node of this cluster
   * @return a new connection; the caller closes it
   * @throws SQLException when the server refuses or cannot be reached
   */
  public Connection connect(PgNode node) throws SQLException {
    return connect(node, new Properties());
  }

  /**
   * Opens a superuser connection with extra pgjdbc properties (e.g. {@code socketTimeout}).
   *
   * @param node a node of this cluster
   * @param extra pgjdbc properties; they override the sandbox's (user, password, timeouts)
   * @return a new connection; the caller closes it
   * @throws SQLException when the server refuses or cannot be reached
   */
  public Connection connect(PgNode node, Properties extra) throws SQLException {
    serverOf(node);
    Properties p = new Properties();
    p.setProperty("user", USER);
    if (password != null) {
      p.setProperty("password", password);
    }
    p.setProperty("connectTimeout", "10");
    // Bounds the whole login, so connecting to a frozen node fails instead of hanging.
    p.setProperty("loginTimeout", "20");
    p.putAll(extra);
    Connection c = DRIVER.connect(node.jdbcUrl(), p);
    if (c == null) {
      throw new SQLException("pgjdbc did not accept " + node.jdbcUrl());
    }
    return c;
  }

  /** Connection for the sandbox's own short control queries. */
  private Connection control(PgNode node) throws SQLException {
    Properties p = new Properties();
    p.setProperty("connectTimeout", "5");
    p.setProperty("socketTimeout", "30");
    p.setProperty("ApplicationName", "omnium-sandbox");
    return connect(node, p);
  }

  private String query(PgNode node, String sql) {
    try (Connection c = control(node)) {
      return Sql.one(c, sql);
    } catch (SQLException e) {
      throw new PgSandboxException(node + ": " + sql + " failed: " + e.getMessage(), e);
    }
  }

  // ---------------------------------------------------------------- what sits in between

  /**
   * Starts a PgBouncer in front of {@code node}: PgBouncer's default configuration but for its
   * listen address and port (free at run time), client authentication (trust, or SCRAM with the
   * cluster's password), the database, {@code pool_mode} and {@code settings}. It runs as the
   * servers do (the unprivileged server user when the JVM is root) and stops with the cluster.
   *
   * @param node the node it forwards to
   * @param mode session or transaction pooling
   * @param settings more {@code [pgbouncer]} settings, e.g. {@code ignore_startup_parameters}
   * @return the running bouncer
   * @throws PgSandboxException when PgBouncer is not installed or does not start
   */
  public PgBouncer startPgBouncer(PgNode node, PgBouncer.Mode mode, Map<String, String> settings) {
    Objects.requireNonNull(mode, "mode");
    if (!PgBouncer.available()) {
      throw new PgSandboxException("PgBouncer is not installed at " + PgBouncer.binary()
          + " (apt-get install -y pgbouncer, or set OMNIUM_PGBOUNCER)");
    }
    serverOf(node);
    return start(new PgBouncer("pgbouncer-" + node.name() + "-" + mode.value() + "-"
        + SIDECAR_SEQUENCE.incrementAndGet(), dir, user, node, mode, DATABASE, USER, password,
        settings));
  }

  /**
   * Starts an HAProxy that balances TCP connections round robin over {@code nodes}: one address
   * reaching several servers, as a reader endpoint does. It stops with the cluster.
   *
   * @param nodes the nodes behind it, in order
   * @return the running proxy
   * @throws PgSandboxException when HAProxy is not installed or does not start
   */
  public HaProxy startHaProxy(List<PgNode> nodes) {
    if (!HaProxy.available()) {
      throw new PgSandboxException("HAProxy is not installed at " + HaProxy.binary()
          + " (apt-get install -y haproxy, or set OMNIUM_HAPROXY)");
    }
    nodes.forEach(this::serverOf);
    return start(new HaProxy("haproxy-" + SIDECAR_SEQUENCE.incrementAndGet(), dir, user, nodes));
  }

  private <T extends Sidecar> T start(T sidecar) {
    synchronized (controlLock) {
      checkOpen();
      sidecars.add(sidecar);
      sidecar.start();
    }
    return sidecar;
  }

  /**
   * Stops a PgBouncer or HAProxy this cluster started (idempotent; {@link #close()} stops every
   * one).
   *
   * @param sidecar a bouncer or proxy of this cluster
   */
  public void stop(Sidecar sidecar) {
    if (!sidecars.contains(sidecar)) {
      throw new IllegalArgumentException(sidecar + " is not a sidecar of " + this);
    }
    sidecar.stop();
  }

  // ---------------------------------------------------------------- replication control

  /**
   * Pauses WAL replay on a replica ({@code pg_wal_replay_pause()}): it keeps receiving WAL but its
   * data falls behind, so its lag grows for real.
   *
   * @param replica a replica of this cluster
   */
  public void pauseReplay(PgNode replica) {
    query(replicaOf(replica).node(), "SELECT pg_wal_replay_pause()");
  }

  /**
   * Resumes WAL replay on a replica ({@code pg_wal_replay_resume()}).
   *
   * @param replica a replica of this cluster
   */
  public void resumeReplay(PgNode replica) {
    query(replicaOf(replica).node(), "SELECT pg_wal_replay_resume()");
  }

  /**
   * Sets how long a replica lets replay wait for conflicting queries before cancelling them
   * ({@code max_standby_streaming_delay} and {@code max_standby_archive_delay}, via ALTER SYSTEM
   * and a reload). With a short delay, e.g. 100 ms, a TRUNCATE on the primary cancels a replica
   * transaction that read the table with SQLState 40001.
   *
   * @param replica a replica of this cluster
   * @param delay the delay; negative means wait forever (-1)
   */
  public void setConflictDelay(PgNode replica, Duration delay) {
    PgNode node = replicaOf(replica).node();
    long ms = delay.isNegative() ? -1 : delay.toMillis();
    String value = ms < 0 ? "-1" : ms + "ms";
    try (Connection c = control(node)) {
      Sql.exec(c, "ALTER SYSTEM SET max_standby_streaming_delay = '" + value + "'");
      Sql.exec(c, "ALTER SYSTEM SET max_standby_archive_delay = '" + value + "'");
      Sql.one(c, "SELECT pg_reload_conf()");
    } catch (SQLException e) {
      throw new PgSandboxException(node + ": setting the conflict delay failed: "
          + e.getMessage(), e);
    }
    // The reload is asynchronous; a fresh backend sees the postmaster's view of the settings.
    Poll.until(DEFAULT_AWAIT, node + " to reload max_standby_streaming_delay=" + value,
        () -> String.valueOf(ms).equals(query(node, "SELECT setting FROM pg_settings"
            + " WHERE name = 'max_standby_streaming_delay'")));
  }

  /**
   * Waits until a replica streams from the primary (the primary's {@code pg_stat_replication}
   * shows it in state {@code streaming}).
   *
   * @param replica a replica of this cluster
   * @param timeout how long to wait
   * @throws PgSandboxException on timeout
   */
  public void awaitStreaming(PgNode replica, Duration timeout) {
    String name = replicaOf(replica).node().name();
    Poll.until(timeout, name + " to stream from the primary", () -> "1".equals(query(primary(),
        "SELECT 1 FROM pg_stat_replication WHERE application_name = '" + name
            + "' AND state = 'streaming'")));
  }

  /**
   * Waits up to 30 s for a replica to replay everything the primary has written so far.
   *
   * @param replica a replica of this cluster
   * @throws PgSandboxException on timeout
   */
  public void awaitCaughtUp(PgNode replica) {
    awaitCaughtUp(replica, DEFAULT_AWAIT);
  }

  /**
   * Waits until a replica has replayed the primary's WAL up to the position at the time of the
   * call. Does not resume paused replay: a paused replica times out.
   *
   * @param replica a replica of this cluster
   * @param timeout how long to wait
   * @throws PgSandboxException on timeout
   */
  public void awaitCaughtUp(PgNode replica, Duration timeout) {
    PgNode node = replicaOf(replica).node();
    // The insert position, not the write position: with synchronous_commit=off a commit may
    // still sit in WAL buffers, and the caller wants to see it on the replica.
    long target;
    try (Connection c = control(primary())) {
      long insert = Lsn.parse(Sql.one(c, "SELECT pg_current_wal_insert_lsn()::text"));
      long segment = Long.parseLong(Sql.one(c,
          "SELECT setting FROM pg_settings WHERE name = 'wal_segment_size'"));
      long block = Long.parseLong(Sql.one(c,
          "SELECT setting FROM pg_settings WHERE name = 'wal_block_size'"));
      target = Lsn.replayTarget(insert, segment, block);
    } catch (SQLException e) {
      throw new PgSandboxException("primary: reading the WAL position failed: " + e.getMessage(),
          e);
    }
    String[] replayed = {"(unknown)"};
    try {
      Poll.until(timeout, node + " to replay up to " + Lsn.format(target), () -> {
        String lsn = query(node, "SELECT pg_last_wal_replay_lsn()::text");
        replayed[0] = String.valueOf(lsn);
        return lsn != null && Lsn.parse(lsn) >= target;
      });
    } catch (PgSandboxException e) {
      throw new PgSandboxException(e.getMessage() + "; it has replayed up to " + replayed[0], e);
    }
  }

  // ---------------------------------------------------------------- faults

  /**
   * Stops a node.
   *
   * @param node a node of this cluster
   * @param immediate true: {@code pg_ctl stop -m immediate} (like a crash); false: fast shutdown
   */
  public void stop(PgNode node, boolean immediate) {
    synchronized (controlLock) {
      serverOf(node).stop(immediate);
    }
  }

  /**
   * Starts a stopped node again on the same port and waits until it accepts connections (a
   * replica then reconnects to the primary by itself; see {@link #awaitStreaming}). No-op when it
   * runs.
   *
   * @param node a node of this cluster
   */
  public void start(PgNode node) {
    synchronized (controlLock) {
      checkOpen();
      PgServer s = serverOf(node);
      if (s.postmasterPid().isEmpty()) {
        s.start();
      }
    }
    awaitAccepting(node);
  }

  /**
   * Restarts a node (fast shutdown, same port, same data) with its wall clock shifted by
   * {@code offset} through libfaketime: {@code now()}, {@code clock_timestamp()} and every
   * timestamp it writes (a heartbeat's {@code beat_at}, say) are that far ahead (positive) or
   * behind (negative) real time. {@link Duration#ZERO} restarts it with the real clock. A replica
   * reconnects to the primary by itself; {@link #awaitStreaming} waits for that. Check
   * {@link FakeTime#available()} first (tests skip with {@link FakeTime#unavailableReason()}).
   *
   * @param node a node of this cluster
   * @param offset how far its clock is shifted
   * @throws PgSandboxException when libfaketime is unavailable or the node does not start
   */
  public void skewClock(PgNode node, Duration offset) {
    Objects.requireNonNull(offset, "offset");
    if (!offset.isZero()) {
      FakeTime.library(); // fail before stopping anything
    }
    synchronized (controlLock) {
      checkOpen();
      PgServer s = serverOf(node);
      s.stop(false);
      s.clockOffset(offset);
      s.start();
    }
    awaitAccepting(node);
  }

  /**
   * @param node a node of this cluster
   * @return the shift of its wall clock set by {@link #skewClock}; zero when real
   */
  public Duration clockOffset(PgNode node) {
    return serverOf(node).clockOffset();
  }

  /** Fast shutdown and start of the primary, on the same port; replicas reconnect by themselves. */
  public void restartPrimary() {
    synchronized (controlLock) {
      checkOpen();
      primary.stop(false);
      primary.start();
    }
    awaitAccepting(primary());
  }

  /**
   * Black-holes a node: SIGSTOP to its postmaster and every child process. TCP connections are
   * still accepted by the kernel but nothing answers, like a hung host.
   *
   * @param node a node of this cluster
   */
  public void freeze(PgNode node) {
    synchronized (controlLock) {
      checkOpen();
      serverOf(node).freeze();
    }
  }

  /**
   * Undoes {@link #freeze}: SIGCONT to the node's processes.
   *
   * @param node a node of this cluster
   */
  public void thaw(PgNode node) {
    synchronized (controlLock) {
      serverOf(node).thaw();
    }
  }

  // ---------------------------------------------------------------- roles: switchover, failover

  /**
   * Promotes a standby ({@code pg_promote}) and waits until it accepts writes. The node keeps its
   * name: {@link #primary()} still names the node created as the primary, whatever its role now.
   * For a planned switchover, stop the primary first ({@link #stop(PgNode, boolean)} with
   * {@code immediate=false}); for a crash failover, with {@code immediate=true}.
   *
   * @param standby a node of this cluster that is in recovery
   * @throws PgSandboxException when it is not a standby or does not leave recovery within 60 s
   */
  public void promote(PgNode standby) {
    synchronized (controlLock) {
      checkOpen();
      serverOf(standby);
      if (!isInRecovery(standby)) {
        throw new PgSandboxException(standby + " is not in recovery: nothing to promote");
      }
      // wait => true: returns once the promotion is done (or after 60 s with false)
      String done = query(standby, "SELECT pg_promote(true, 60)");
      if (!"t".equals(done)) {
        throw new PgSandboxException(standby + " was not promoted within 60 s");
      }
    }
    Poll.until(START_TIMEOUT, standby + " to accept writes", () -> !isInRecovery(standby));
  }

  /**
   * An asynchronous failover that loses writes: {@code newPrimary} stops (it misses what comes
   * next), {@code lostWrites} run on the primary and reach {@code leftBehind} only, the primary
   * crashes ({@code stop -m immediate}), and {@code newPrimary} starts and is promoted to a new
   * timeline without them. {@code leftBehind} stays a standby of the dead primary on the abandoned
   * timeline, with rows the cluster no longer has; it cannot follow the new primary until it is
   * rebuilt ({@link #rebuildAsStandby}). The node created as the primary stays stopped.
   *
   * @param newPrimary a standby to promote
   * @param leftBehind a standby that replays the lost writes and stays on the old timeline
   * @param lostWrites SQL run on the primary between the two (committed, then lost)
   */
  public void asyncFailover(PgNode newPrimary, PgNode leftBehind, String... lostWrites) {
    PgNode old = primary();
    replicaOf(newPrimary);
    replicaOf(leftBehind);
    stop(newPrimary, false);
    try (Connection c = control(old)) {
      for (String sql : lostWrites) {
        Sql.exec(c, sql);
      }
    } catch (SQLException e) {
      throw new PgSandboxException(old + ": the writes to lose failed: " + e.getMessage(), e);
    }
    awaitCaughtUp(leftBehind);
    stop(old, true);
    start(newPrimary);
    promote(newPrimary);
  }

  /**
   * Rebuilds a node as a standby of {@code upstream}: stops it if it runs, replaces its data
   * directory with a base backup of the running {@code upstream} (what {@code pg_basebackup -R}
   * does, see BaseBackup), starts it on its own port and waits until it streams from
   * {@code upstream}. This is how an old primary rejoins after a switchover or failover.
   *
   * @param node a node of this cluster (typically the old primary)
   * @param upstream the running primary it follows from now on
   */
  public void rebuildAsStandby(PgNode node, PgNode upstream) {
    if (node == upstream) {
      throw new IllegalArgumentException(node + " cannot follow itself");
    }
    synchronized (controlLock) {
      checkOpen();
      PgServer s = serverOf(node);
      PgServer from = serverOf(upstream);
      s.stop(false);
      try {
        FileTrees.delete(s.dataDir());
      } catch (IOException e) {
        throw new PgSandboxException("cannot remove the data directory of " + node + ": " + e, e);
      }
      try (Connection c = control(upstream)) {
        BaseBackup.take(c, from.dataDir(), s.dataDir(), user);
      } catch (SQLException e) {
        throw new PgSandboxException(upstream + ": cannot connect for a base backup: "
            + e.getMessage(), e);
      }
      writeNodeConfig(s, upstream.port());
      user.writeFile(s.dataDir().resolve("standby.signal"), "");
      s.start();
    }
    awaitAccepting(node);
    awaitStreamingFrom(node, upstream, START_TIMEOUT);
  }

  /**
   * Waits until a standby streams from {@code upstream} (its {@code pg_stat_replication}).
   *
   * @param standby a node of this cluster that is in recovery
   * @param upstream the node it streams from
   * @param timeout how long to wait
   * @throws PgSandboxException on timeout
   */
  public void awaitStreamingFrom(PgNode standby, PgNode upstream, Duration timeout) {
    String name = serverOf(standby).node().name();
    Poll.until(timeout, name + " to stream from " + upstream, () -> "1".equals(query(upstream,
        "SELECT 1 FROM pg_stat_replication WHERE application_name = '" + name
            + "' AND state = 'streaming'")));
  }

  /**
   * Asks the node itself.
   *
   * @param node a running node of this cluster
   * @return whether it is in recovery (a standby) now
   */
  public boolean isInRecovery(PgNode node) {
    return "t".equals(query(node, "SELECT pg_is_in_recovery()"));
  }

  private void awaitAccepting(PgNode node) {
    Poll.until(START_TIMEOUT, node + " to accept connections", () -> "1".equals(query(node,
        "SELECT 1")));
  }

  // ---------------------------------------------------------------- logs and lifecycle

  /** @return every node's server log, each under a header line */
  public String logs() {
    StringBuilder b = new StringBuilder();
    for (PgServer s : all()) {
      PgNode n = s.node();
      b.append("===== ").append(n.name()).append(" (").append(n.hostPort()).append(", PostgreSQL ")
          .append(version()).append(") log: ").append(n.logFile()).append(" =====\n");
      b.append(Files.exists(n.logFile()) ? FileTrees.readOrNote(n.logFile()) : "(no log)\n");
    }
    for (Sidecar s : sidecars()) {
      b.append("===== ").append(s).append(" log: ").append(s.logFile()).append(" =====\n");
      b.append(s.log());
    }
    return b.toString();
  }

  /**
   * Prints {@link #logs()}.
   *
   * @param out where to print
   */
  public void printLogs(PrintStream out) {
    out.print(logs());
    out.flush();
  }

  /**
   * Stops every server (immediate shutdown) and deletes the cluster's directory. Idempotent; also
   * run by a shutdown hook for clusters still open at JVM exit.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    Trace t = new Trace(id);
    try {
      for (Sidecar s : sidecars()) {
        s.stop();
      }
      inParallel(all(), s -> s.stop(true));
      t.step("stopped");
    } finally {
      FileTrees.deleteQuietly(dir);
      ClusterRegistry.unregister(this);
      t.step("deleted");
    }
  }

  /** @return true once {@link #close()} ran */
  public boolean isClosed() {
    return closed;
  }

  @Override
  public String toString() {
    return "PgCluster[" + id + ", PostgreSQL " + version() + ", " + all().stream()
        .map(s -> s.node().toString()).collect(Collectors.joining(", ")) + "]";
  }

  // ---------------------------------------------------------------- package-private, for tests

  Path clusterDir() {
    return dir;
  }

  OptionalLong postmasterPid(PgNode node) {
    return serverOf(node).postmasterPid();
  }

  String serverUser() {
    return user.name();
  }

  // ---------------------------------------------------------------- helpers

  private List<Sidecar> sidecars() {
    synchronized (sidecars) {
      return new ArrayList<>(sidecars);
    }
  }

  private List<PgServer> all() {
    List<PgServer> all = new ArrayList<>();
    all.add(primary);
    all.addAll(replicas);
    return all;
  }

  private PgServer serverOf(PgNode node) {
    Objects.requireNonNull(node, "node");
    for (PgServer s : all()) {
      if (s.node() == node) {
        return s;
      }
    }
    throw new IllegalArgumentException(node + " is not a node of " + this);
  }

  private PgServer replicaOf(PgNode node) {
    PgServer s = serverOf(node);
    if (s == primary) {
      throw new IllegalArgumentException(node + " is the primary, not a replica");
    }
    return s;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
  }

  /** Runs the task for every item on its own thread; rethrows the first failure after all ended. */
  private static void inParallel(List<PgServer> items, Consumer<PgServer> task) {
    if (items.size() <= 1) {
      items.forEach(task);
      return;
    }
    List<Thread> threads = new ArrayList<>();
    List<RuntimeException> failures = Collections.synchronizedList(new ArrayList<>());
    for (PgServer item : items) {
      Thread t = new Thread(() -> {
        try {
          task.accept(item);
        } catch (RuntimeException e) {
          failures.add(e);
        }
      }, "omnium-sandbox-" + item.node().name());
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new PgSandboxException("interrupted", e);
      }
    }
    if (!failures.isEmpty()) {
      RuntimeException first = failures.get(0);
      failures.subList(1, failures.size()).forEach(first::addSuppressed);
      throw first;
    }
  }

  private static String randomPassword() {
    String alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    SecureRandom r = new SecureRandom();
    StringBuilder b = new StringBuilder("sbx-");
    for (int i = 0; i < 20; i++) {
      b.append(alphabet.charAt(r.nextInt(alphabet.length())));
    }
    return b.toString();
  }

  /** Configures and starts a {@link PgCluster}. */
  public static final class Builder {

    private static final Pattern SETTING_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.]*");

    private int replicas = 1;
    private String version;
    private boolean requirePasswords;
    private boolean tls;
    private boolean ownSystemIdentifier;
    private Path localBin;
    private final Map<String, String> settings = new LinkedHashMap<>();

    private Builder() {}

    /**
     * @param count number of streaming replicas (default 1; 0 gives a lone primary)
     * @return this
     */
    public Builder replicas(int count) {
      if (count < 0) {
        throw new IllegalArgumentException("replicas must be >= 0: " + count);
      }
      this.replicas = count;
      return this;
    }

    /**
     * @param version "18" (18.1.0), "15" (15.14.0) or a full bundled version; null or unset: system
     *     property {@code omnium.pg.version}, else env {@code OMNIUM_PG_VERSION}, else "18".
     * Ignored     when a local install is used ({@code OMNIUM_PG_BIN}, {@link #localInstall}).
     * @return this
     */
    public Builder version(String version) {
      this.version = version;
      return this;
    }

    /**
     * @param require true: TCP connections need the superuser's password (scram-sha-256), see
     *     {@link PgCluster#password()}; false (default): trust
     * @return this
     */
    public Builder requirePasswords(boolean require) {
      this.requirePasswords = require;
      return this;
    }

    /**
     * TLS on every node with certificates made now ({@link TlsFiles}): the servers accept TCP
     * connections only over TLS ({@code hostssl} in pg_hba.conf), so a client with
     * {@code sslmode=disable} finds no pg_hba.conf entry; {@link PgCluster#tls()} names the
     * authority to verify them with. Needs {@code openssl}.
     *
     * @return this
     */
    public Builder tls() {
      this.tls = true;
      return this;
    }

    /**
     * Runs initdb for this cluster instead of copying the shared template (a few seconds more):
     * its system identifier then differs from every other sandbox cluster's, as a different
     * cluster's does. Clusters copied from the template share one identifier.
     *
     * @return this
     */
    public Builder ownSystemIdentifier() {
      this.ownSystemIdentifier = true;
      return this;
    }

    /**
     * Adds a postgresql.conf setting for every node, overriding the sandbox's default (e.g.
     * {@code max_connections}, 300). Port, socket and replication settings are the sandbox's own.
     *
     * @param name setting name
     * @param value setting value, unquoted
     * @return this
     */
    public Builder setting(String name, String value) {
      Objects.requireNonNull(value, "value");
      if (name == null || !SETTING_NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("not a setting name: " + name);
      }
      if (PgConfig.RESERVED.contains(name.toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException(name + " is managed by the sandbox and cannot be set");
      }
      settings.put(name, value);
      return this;
    }

    /**
     * Uses a local PostgreSQL install instead of the bundled binaries (as {@code OMNIUM_PG_BIN}
     * does).
     *
     * @param binDir a directory with initdb, pg_ctl and postgres, e.g. /usr/lib/postgresql/15/bin
     * @return this
     */
    public Builder localInstall(Path binDir) {
      this.localBin = binDir;
      return this;
    }

    /**
     * Creates and starts the cluster; returns when every replica streams.
     *
     * @return the running cluster; close it
     * @throws PgSandboxException when it cannot start (the message includes the server logs)
     */
    public PgCluster start() {
      PgCluster cluster = new PgCluster(this);
      ClusterRegistry.register(cluster);
      try {
        cluster.boot();
        return cluster;
      } catch (RuntimeException e) {
        String logs = cluster.logs();
        try {
          cluster.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw new PgSandboxException("cannot start " + cluster + ": " + e.getMessage()
            + "\n" + logs, e);
      }
    }
  }
}
