package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything that logical connections of one configuration share: replica pools and watchers,
 * the capped fallback pool, the primary source, counters and the JMX bean. Thread-safe; the
 * routing decision reads volatile fields only.
 */
final class Router implements AutoCloseable, RouterMXBean {
  private static final Logger log = LoggerFactory.getLogger(Router.class);
  private static final AtomicInteger SEQUENCE = new AtomicInteger();

  final OmniumConfig config;
  final long defaultMaxAgeNanos;
  /**
   * Read sessions behind a pooler are made pgjdbc-read-only ({@link ReadBindings#bind}); false
   * with the user's {@code readOnlyMode=always}, which would set it for the shared session.
   */
  final boolean readOnlyBegin;
  private final ReplicaEndpoint[] replicas;
  /** Each replica's lag alert, one per router on the (shared) watcher. */
  private final LagAlert[] alerts;
  private final BackgroundSessions.Lease<LagWatcher>[] watchers;
  private final HikariDataSource fallback;
  private final PgConnector fallbackConnector;
  private final PgConnector primaryConnector;
  /** The process-wide cap on open fallback sessions of the primary database and user. */
  private final SessionCap fallbackCap;
  private final PrimarySource primary;
  private final ObjectName objectName;
  private final HeartbeatWriter heartbeatWriter;
  private final BackgroundSessions.Lease<HeartbeatWriter> heartbeatLease;
  private final PrimaryWalSampler walSampler;
  private final BackgroundSessions.Lease<PrimaryWalSampler> samplerLease;
  final List<LagAlertListener> listeners = new CopyOnWriteArrayList<>();
  private int rotation; // racy on purpose: it only spreads ties between equally loaded replicas

  final LongAdder primaryStatements = new LongAdder();
  final LongAdder replicaRoutes = new LongAdder();
  final LongAdder fallbackRoutes = new LongAdder();
  final LongAdder retries = new LongAdder();
  final LongAdder replicaAcquireFailures = new LongAdder();
  final LongAdder writePositionChecks = new LongAdder();
  final LongAdder sessionResets = new LongAdder();
  final LongAdder sessionsClosedForState = new LongAdder();
  final WritePositions writePositions;

  private volatile boolean closed;
  /** Driver mode: which logical connections hold this router (idle routers close themselves). */
  final RouterUse use = new RouterUse();
  final RouterCredentials credentials;
  private final FallbackBudget fallbackBudget;

  /**
   * @param pooledPrimary DataSource mode: primary connections come from an internal pool of
   *     primaryPoolSize; driver mode: each logical connection opens its own, 1:1.
   */
  Router(OmniumConfig config, boolean pooledPrimary) {
    this(config, pooledPrimary, null);
  }

  /**
   * @param pooledPrimary DataSource mode: primary connections come from an internal pool of
   *     primaryPoolSize; driver mode: each logical connection opens its own, 1:1.
   * @param proving DataSource mode: the session whose login proved {@code config}'s credentials
   *     ({@link #primaryLogin}); the primary pool's first session. Null: none.
   */
  @SuppressWarnings({"unchecked", "rawtypes"}) // the array of leases
  Router(OmniumConfig config, boolean pooledPrimary, Connection proving) {
    this.config = config;
    this.defaultMaxAgeNanos = config.maxAge().toNanos();
    this.readOnlyBegin = config.readOnlyBegin();
    int id = SEQUENCE.incrementAndGet();
    String app = config.applicationName();
    this.credentials = new RouterCredentials(config);

    primaryConnector = connector(Route.PRIMARY, config.primaryUrl(), app + " primary");
    if (pooledPrimary) primaryConnector.feedingPool();
    if (proving != null) primaryConnector.seed(proving);
    this.primary = pooledPrimary
        ? PrimarySource.pooled(Pools.create(app + "-primary-" + id, Route.PRIMARY,
            primaryConnector, config.primaryPoolSize(), config.primaryPoolSize(),
                config.poolTimeout(), config.maxLifetime()), primaryConnector,
            config.poolTimeout(),
            "all " + config.primaryPoolSize() + " (primaryPoolSize) are in use")
        : PrimarySource.direct(primaryConnector);

    // The fallback pool keeps nothing idle: it opens sessions as reads need them, up to
    // fallbackPoolSize for the whole process, and closes them after poolIdleTimeout.
    fallbackConnector = connector(Route.FALLBACK, config.primaryUrl(), app + " fallback")
        .feedingPool();
    this.fallbackCap = SessionCap.join(config.fallbackBudgetKey(), config.fallbackPoolSize(),
        "fallbackPoolSize", app);
    CappedSessions fallbackSessions = new CappedSessions(fallbackConnector, fallbackCap,
        config.poolTimeout().toNanos(), "fallbackPoolSize");
    this.fallback = fallbackSessions.feeds(Pools.create(app + "-fallback-" + id, Route.FALLBACK,
        fallbackSessions, config.fallbackPoolSize(), 0, config.poolTimeout(),
        config.maxLifetime(), config.poolIdleTimeout()));
    fallbackCap.attach(fallback, null);
    this.fallbackBudget = FallbackBudget.join(config);

    List<HostSpec> hosts = config.replicas();
    this.samplerLease = hosts.isEmpty() ? null : walSampler(config.primaryUrl(), app);
    this.walSampler = samplerLease == null ? null : samplerLease.session();
    // a token waits for the sample that dates its commit as long as for a pooled session
    this.writePositions = new WritePositions(config.readYourWrites(),
        config.readYourWritesTtl().toNanos(), walSampler == null ? null : walSampler.timeline(),
        walSampler == null ? () -> { } : walSampler::requestSample,
        config.poolTimeout().toNanos());
    this.replicas = new ReplicaEndpoint[hosts.size()];
    this.alerts = new LagAlert[hosts.size()];
    this.watchers = new BackgroundSessions.Lease[hosts.size()];
    for (int i = 0; i < replicas.length; i++) {
      HostSpec h = hosts.get(i);
      String name = h.toString();
      String url = config.replicaUrl(h);
      PgConnector pooled = connector(Route.REPLICA, url, app + " replica " + name).feedingPool();
      Properties replicaProps = config.physicalProperties(Route.REPLICA);
      SessionCap cap = SessionCap.join(List.of("replica", url,
          String.valueOf(replicaProps.getProperty("user"))), config.replicaPoolSize(),
          "replicaPoolSize", app);
      CappedSessions capped = new CappedSessions(pooled, cap,
          config.replicaAcquireTimeout().toNanos(), "replicaPoolSize");
      watchers[i] = watcher(name, url);
      LagWatcher watcher = watchers[i].session();
      // One address may reach several servers (a reader endpoint): a watcher for each, shared
      // with the address's watcher by every router that holds it.
      ServerWatchers servers = watcher.servers();
      // No idle session until the watcher saw a standby there (ReplicaEndpoint).
      HikariDataSource pool = capped.feeds(Pools.create(app + "-replica-" + name + "-" + id,
          Route.REPLICA, new ReplicaSessions(capped, watcher, servers, pooled),
          config.replicaPoolSize(), 0, config.replicaAcquireTimeout(), config.maxLifetime(),
          config.poolIdleTimeout()));
      alerts[i] = new LagAlert(name, config.lagAlertThreshold(), config.lagAlertAfter(),
          listeners);
      watcher.alertWith(alerts[i]);
      replicas[i] = new ReplicaEndpoint(name, watcher, pool, config.replicaPoolSize(),
          replicas.length > 1, this::primaryFound, cap, servers);
      ReplicasByHost.add(replicas[i]);
      // told of role changes from now on; a standby already seen fills the pool now
      watchers[i].shared().endpoints.add(replicas[i]);
      if (watcher.knownStandby()) replicas[i].serverIsStandby();
    }
    if (config.heartbeatWriter()) {
      heartbeatLease = heartbeatWriter(app);
      heartbeatWriter = heartbeatLease.session();
    } else {
      heartbeatLease = null;
      heartbeatWriter = null;
    }
    this.objectName = register(app);
    if (replicas.length == 0) {
      log.info("omnium: no replica configured for {}: read-only work runs on the primary through"
          + " the fallback pool"
          + " (at most {} connections)", app, config.fallbackPoolSize());
    }
  }

  /**
   * A connector for the primary as a logical connection of {@code config} logs in there: the login
   * that proves its credentials before a router takes them, and a driver-mode connection's own
   * primary session when its credentials are not the router's (yet).
   */
  static PgConnector primaryLogin(OmniumConfig config) {
    return new PgConnector(config.primaryUrl(), ClientTimeouts.apply(config, Route.PRIMARY,
        config.physicalProperties(Route.PRIMARY)), config.applicationName() + " primary")
        .settingsBy(StartupSettings.of(config, Route.PRIMARY, config.primaryUrl()));
  }

  /**
   * Where a driver-mode connection of {@code config}, whose credential set is {@code digest},
   * opens its primary session: the router's own source when the set is the router's, else one of
   * its own, whose logins still prove or refute the set.
   */
  PrimarySource primaryFor(OmniumConfig config, String digest, Connection proving) {
    if (proving == null && credentials.isCurrent(digest)) return primary;
    PgConnector own = primaryLogin(config);
    own.reportTo(credentials, digest);
    if (proving != null) own.seed(proving);
    return PrimarySource.direct(own);
  }

  /**
   * The primary answered this router within the last two heartbeat intervals (at least a
   * second): a round of its WAL sampler (one per interval while replicas are listed), or a login
   * on the primary side (a connection's own, a pool's).
   */
  boolean primaryAnsweredRecently(long nowNanos) {
    long window = Math.max(2 * config.heartbeatInterval().toNanos(), TimeUnit.SECONDS.toNanos(1));
    PrimaryWalSampler s = walSampler;
    return (s != null && s.answeredWithin(nowNanos, window))
        || credentials.loggedInWithin(nowNanos, window);
  }

  /** The connector behind the pooled primary (DataSource mode) or every direct one. */
  PgConnector primaryConnector() {
    return primaryConnector;
  }

  /**
   * The clock-free lag measure's primary side: one session {@code <applicationName>:sampler} on
   * the primary, one query per heartbeatInterval, shared by every router of the process that
   * samples the same primary the same way (see {@link BackgroundSessions}).
   */
  private BackgroundSessions.Lease<PrimaryWalSampler> walSampler(String primaryUrl, String app) {
    // the watcher's bounds: a sample takes milliseconds, a frozen primary must be noticed soon
    Properties p = ClientTimeouts.apply(config, Route.WATCHER,
        config.physicalProperties(Route.HEARTBEAT));
    p.setProperty("ApplicationName", app + ":sampler");
    long interval = config.heartbeatInterval().toNanos();
    long horizon = Math.max(TimeUnit.SECONDS.toNanos(60), 2 * Math.max(config.maxAge().toNanos(),
        config.lagAlertThreshold().toNanos()));
    // behind a pooler, its settings go with each transaction as the address's others do
    StartupSettings settings = StartupSettings.of(config, Route.HEARTBEAT, primaryUrl);
    Object key = BackgroundSessions.key("sampler", primaryUrl, p, credentialsHash(),
        config.heartbeatInterval(), horizon, settings);
    BackgroundSessions.Lease<PrimaryWalSampler> lease = BackgroundSessions.acquire(key, () -> {
      PgConnector connector = new PgConnector(primaryUrl, p, app + " primary WAL sampler")
          .settingsBy(settings);
      BackgroundSessions.Followers followers =
          BackgroundSessions.Followers.reportingFrom(connector, config);
      PrimaryWalSampler sampler = new PrimaryWalSampler(connector,
          WalTimeline.covering(horizon, interval), config.heartbeatInterval(), "omnium-wal-" + app);
      sampler.start();
      return new BackgroundSessions.Shared<>(sampler, connector, followers);
    });
    credentials.follow(Route.HEARTBEAT, lease.shared());
    return lease;
  }

  /**
   * The lag watcher of replica {@code name}: one session {@code <applicationName>:watcher} on it,
   * shared by every router of the process that watches it the same way with the same sampler.
   * Its findings reach the endpoints of every router that holds it.
   */
  private BackgroundSessions.Lease<LagWatcher> watcher(String name, String url) {
    String app = config.applicationName();
    Properties p = ClientTimeouts.apply(config, Route.WATCHER,
        config.physicalProperties(Route.WATCHER));
    StartupSettings settings = StartupSettings.of(config, Route.WATCHER, url);
    Object key = BackgroundSessions.key("watcher", url, p, credentialsHash(),
        config.heartbeatTable(), config.heartbeatInterval(), samplerLease.shared(), settings);
    BackgroundSessions.Lease<LagWatcher> lease = BackgroundSessions.acquire(key, () -> {
      PgConnector connector = new PgConnector(url, p, app + " lag watcher " + name)
          .settingsBy(settings);
      LagWatcher w = new LagWatcher(name, connector, config.heartbeatTable(),
          config.heartbeatInterval(), "omnium-lag-" + app + "-" + name, walSampler.timeline());
      BackgroundSessions.Shared<LagWatcher> shared = new BackgroundSessions.Shared<>(w, connector);
      w.expectWriter(config.heartbeatWriter());
      w.judgeAgainst(walSampler::identity); // the key holds the sampler: one primary
      // One address may reach several servers (a reader endpoint): a watcher for each, through
      // the same connector, each proving its own server is this cluster's; shared with the
      // address's watcher (they go when its last router lets it go).
      new ServerWatchers(name, w, k -> {
        LagWatcher o = new LagWatcher(name + "/" + k, connector, config.heartbeatTable(),
            config.heartbeatInterval(), "omnium-lag-" + app + "-" + name + "/" + k,
            walSampler.timeline());
        o.expectWriter(config.heartbeatWriter());
        o.judgeAgainst(walSampler::identity);
        return o;
      }, Math.max(TimeUnit.SECONDS.toNanos(60), 20 * config.heartbeatInterval().toNanos()));
      w.onTimeout(() -> shared.endpoints.forEach(ReplicaEndpoint::abortLent));
      w.onRoleChange(() -> shared.endpoints.forEach(ReplicaEndpoint::serverIsPrimary),
          () -> shared.endpoints.forEach(ReplicaEndpoint::serverIsStandby));
      w.start();
      return shared;
    });
    credentials.follow(Route.WATCHER, lease.shared());
    return lease;
  }

  /** The heartbeat writer, shared by every router of the process that writes the same way. */
  private BackgroundSessions.Lease<HeartbeatWriter> heartbeatWriter(String app) {
    Properties p = ClientTimeouts.apply(config, Route.HEARTBEAT,
        config.physicalProperties(Route.HEARTBEAT));
    StartupSettings settings = StartupSettings.of(config, Route.HEARTBEAT, config.primaryUrl());
    Object key = BackgroundSessions.key("heartbeat", config.primaryUrl(), p, credentialsHash(),
        config.heartbeatTable(), config.heartbeatInterval(), settings);
    BackgroundSessions.Lease<HeartbeatWriter> lease = BackgroundSessions.acquire(key, () -> {
      PgConnector connector = new PgConnector(config.primaryUrl(), p,
          app + " heartbeat writer").settingsBy(settings);
      BackgroundSessions.Followers followers =
          BackgroundSessions.Followers.reportingFrom(connector, config);
      HeartbeatWriter writer = new HeartbeatWriter(connector, config.heartbeatTable(),
          config.heartbeatInterval(), "omnium-heartbeat-" + app);
      writer.start();
      return new BackgroundSessions.Shared<>(writer, connector, followers);
    });
    credentials.follow(Route.HEARTBEAT, lease.shared());
    return lease;
  }

  /**
   * Background sessions are shared only between routers with the same credentials (a hash: the key
   * lives in a static map and is never printed; a collision only shares one that rotates).
   */
  private int credentialsHash() {
    return config.secretsKey().hashCode();
  }

  /**
   * A connector for {@code route}: its session settings, its client-side bounds, credentials that
   * follow rotation, and the server role the route accepts. A replica pool's connector refuses a
   * server that reports itself a primary; the fallback's ignores {@code url} and finds the primary
   * among the listed primary hosts (its read-only sessions defeat targetServerType=primary); the
   * other routes take what {@code url} reaches.
   */
  private PgConnector connector(Route route, String url, String label) {
    Properties p = ClientTimeouts.apply(config, route, config.physicalProperties(route));
    PgConnector c = route == Route.FALLBACK
        ? PgConnector.primaryAmong(config.primaryHostUrls(), p, label)
        : new PgConnector(url, p, label, route == Route.REPLICA);
    return credentials.track(route, c.settingsBy(StartupSettings.of(config, route,
        route == Route.FALLBACK ? String.join(",", config.primaryHostUrls()) : url)));
  }

  /**
   * What each transaction on a primary or fallback session sets, when a pooler sits in front of
   * the primary ({@link StartupSettings}); null while the startup packet carries it. A replica
   * session carries its own ({@link ReplicaSessionBase#perTransaction}).
   */
  TransactionSettings perTransaction(Route route) {
    return route == Route.PRIMARY ? primaryConnector.perTransaction()
        : route == Route.FALLBACK ? fallbackConnector.perTransaction() : null;
  }

  /**
   * The settings a primary or fallback session set when it opened, where a pooler pins sessions
   * ({@link PinnedSettings}); null otherwise. A replica session carries its own ({@link
   * ReplicaSessionBase#pinned}).
   */
  PinnedSettings pinned(Route route) {
    return route == Route.PRIMARY ? primaryConnector.pinned()
        : route == Route.FALLBACK ? fallbackConnector.pinned() : null;
  }

  private ObjectName register(String app) {
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      String base = app.matches("[A-Za-z0-9._-]+") ? app : ObjectName.quote(app);
      for (int n = 1; n < 1000; n++) {
        String value = n == 1 ? base
            : (app.matches("[A-Za-z0-9._-]+") ? app + "-" + n : ObjectName.quote(app + "-" + n));
        ObjectName name = new ObjectName("dev.omnium:type=Router,name=" + value);
        if (!server.isRegistered(name)) {
          server.registerMBean(this, name);
          return name;
        }
      }
    } catch (Exception | LinkageError e) {
      log.warn("omnium: JMX bean for {} not registered: {}", app, e.toString());
    }
    return null;
  }

  ObjectName objectName() {
    return objectName;
  }

  /** The freshest-enough, least-loaded replica, or null: the hot path allocates nothing. */
  ReplicaEndpoint pickReplica(long nowNanos, long maxAgeNanos) {
    return pickReplica(nowNanos, maxAgeNanos, 0);
  }

  /**
   * Like {@link #pickReplica(long, long)}, among replicas whose last sampled replay position is at
   * least {@code minLsn} (0: any).
   */
  ReplicaEndpoint pickReplica(long nowNanos, long maxAgeNanos, long minLsn) {
    ReplicaEndpoint[] rs = replicas;
    int n = rs.length;
    if (n == 0) return null;
    int start = n == 1 ? 0 : (rotation++ & 0x7fffffff) % n;
    ReplicaEndpoint best = null;
    int bestLoad = Integer.MAX_VALUE;
    for (int k = 0; k < n; k++) {
      ReplicaEndpoint r = rs[(start + k) % n];
      if (r.isFresh(nowNanos, maxAgeNanos, minLsn)) {
        int load = r.inUse();
        if (load < bestLoad) {
          best = r;
          bestLoad = load;
        }
      }
    }
    return best;
  }

  /**
   * A listed node was seen to be a primary (a promotion, or the primary at start): the fallback
   * pool's connection adder may be sleeping off the old primary's refusals; wake it.
   */
  private void primaryFound() {
    HikariDataSource f = fallback;
    if (f != null) PoolWakeUp.wake(f);
    PrimarySource p = primary;
    if (p != null) p.wake();
  }

  Connection borrowFallback() throws SQLException {
    return borrowFallback(config.poolTimeout().toNanos(), null);
  }

  /**
   * A fallback session, after at most {@code timeoutNanos} at the cap (and poolTimeout for the
   * pool's session, as ever); or null when the cap kept the caller waiting and meanwhile
   * {@code reroute} (null: never asked) said a replica can serve it after all.
   */
  Connection borrowFallback(long timeoutNanos, BooleanSupplier reroute) throws SQLException {
    if (!takeFallbackPermit(timeoutNanos, reroute)) return null;
    boolean lent = false;
    try {
      Connection c = PoolWait.borrow(fallback, fallbackConnector, config.poolTimeout());
      fallbackBudget.hold(c);
      lent = true;
      return c;
    } catch (SQLTransientConnectionException e) {
      throw Pools.timedOut(e, "fallback connection to the primary", config.poolTimeout(),
          "all " + config.fallbackPoolSize() + " (fallbackPoolSize) are in use because no replica"
              + " is fresh enough for maxAge");
    } finally {
      if (!lent) fallbackBudget.cancel();
    }
  }

  /** fallbackPoolSize caps one primary database and user per process: see FallbackBudget. */
  private boolean takeFallbackPermit(long timeoutNanos, BooleanSupplier reroute)
      throws SQLException {
    FallbackBudget.Outcome taken;
    try {
      taken = fallbackBudget.acquire(timeoutNanos, reroute);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLTransientConnectionException(
          "omnium: interrupted waiting for a fallback connection", "08001", e);
    }
    if (taken == FallbackBudget.Outcome.REROUTED) return false;
    if (taken == FallbackBudget.Outcome.TIMED_OUT) {
      throw new SQLTransientConnectionException(
          "omnium: no fallback connection to the primary within poolTimeout ("
              + config.poolTimeout().toMillis() + " ms): all " + fallbackBudget.size
              + " (fallbackPoolSize, a cap per process for this primary database and user) are"
              + " in use because no replica is fresh enough for maxAge", "08001");
    }
    return true;
  }

  void releaseFallback(Connection c, boolean dead) {
    try {
      // closed rather than kept while a connect of the process waits for a slot of the cap
      Pools.release(fallback, c, dead || fallbackCap.crowded());
      if (dead) {
        // A primary's sessions die together (a crash, a switchover): evict the idle ones now, so a
        // retry or the next read does not draw another dead one (HikariCP skips its liveness check
        // for a connection used within the last 500 ms).
        HikariPoolMXBean bean = fallback.getHikariPoolMXBean();
        if (bean != null) bean.softEvictConnections();
      }
    } finally {
      fallbackBudget.release(c);
    }
  }

  PrimarySource primary() {
    return primary;
  }

  ReplicaEndpoint[] replicaEndpoints() {
    return replicas;
  }

  HikariDataSource fallbackPool() {
    return fallback;
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    if (closed) return;
    closed = true;
    // Nothing in use must close in well under a second, even with a server down or frozen: no
    // wait for connects in flight, threads stopped all at once (a stuck probe is aborted).
    credentials.closing();
    for (ReplicaEndpoint r : replicas) ReplicasByHost.remove(r);
    // Background sessions other routers still hold go on; those this router held last end here.
    List<IntervalSession> last = new ArrayList<>();
    List<PgConnector> lastConnectors = new ArrayList<>();
    for (int i = 0; i < replicas.length; i++) {
      watchers[i].shared().endpoints.remove(replicas[i]);
      watchers[i].session().removeAlert(alerts[i]);
    }
    List<BackgroundSessions.Lease<?>> leases = new ArrayList<>(List.of(watchers));
    if (heartbeatLease != null) leases.add(0, heartbeatLease);
    if (samplerLease != null) leases.add(samplerLease);
    for (BackgroundSessions.Lease<?> lease : leases) {
      credentials.unfollow(lease.shared());
      IntervalSession ended = lease.release();
      if (ended != null) {
        lease.connector().closing();
        last.add(ended);
      }
    }
    for (IntervalSession s : last) {
      s.stop();
      if (s instanceof LagWatcher w && w.servers() != null) w.servers().stopOthers();
    }
    for (IntervalSession s : last) {
      s.close();
      if (s instanceof LagWatcher w && w.servers() != null) w.servers().closeOthers();
    }
    for (ReplicaEndpoint r : replicas) r.close();
    fallbackCap.detach(fallback);
    fallback.close();
    fallbackCap.leave();
    fallbackBudget.leave();
    primary.close();
    credentials.closeUnpooled();
    if (objectName != null) {
      try {
        ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
      } catch (Exception e) {
        log.debug("omnium: JMX bean {} already gone", objectName);
      }
    }
  }

  // ---- RouterMXBean ----

  /**
   * Each replica address, and behind one that reaches several servers each server as
   * {@code address/server} (its own listen address: {@link ServerKey}).
   */
  @Override
  public String[] getReplicas() {
    List<String> names = new ArrayList<>();
    for (ReplicaEndpoint r : replicas) {
      names.add(r.name);
      LagWatcher[] all = r.servers.all();
      for (int i = 0; all.length > 1 && i < all.length; i++) names.add(serverName(r, all[i]));
    }
    return names.toArray(new String[0]);
  }

  /** {@code address/server}: a server behind an address that reaches several. */
  private static String serverName(ReplicaEndpoint r, LagWatcher w) {
    ServerKey k = w.server();
    return r.name + "/" + (k == null ? "?" : k.label);
  }

  /**
   * Per address its first server's lag (the address's watcher), and behind an address that
   * reaches several servers, each server's.
   */
  @Override
  public Map<String, Long> getEffectiveLagMillis() {
    long now = System.nanoTime();
    Map<String, Long> lag = new LinkedHashMap<>();
    for (ReplicaEndpoint r : replicas) {
      lag.put(r.name, lagMillis(r.watcher, now));
      LagWatcher[] all = r.servers.all();
      for (int i = 0; all.length > 1 && i < all.length; i++) {
        lag.put(serverName(r, all[i]), lagMillis(all[i], now));
      }
    }
    return lag;
  }

  private static long lagMillis(LagWatcher w, long now) {
    long nanos = w.effectiveLagNanos(now);
    return nanos == Long.MAX_VALUE ? -1L : TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  @Override
  public Map<String, String> getReplicaStates() {
    Map<String, String> states = new LinkedHashMap<>();
    for (ReplicaEndpoint r : replicas) {
      states.put(r.name, r.watcher.state().name());
      LagWatcher[] all = r.servers.all();
      for (int i = 0; all.length > 1 && i < all.length; i++) {
        states.put(serverName(r, all[i]), all[i].state().name());
      }
    }
    return states;
  }

  @Override public long getMaxAgeMillis() { return config.maxAge().toMillis(); }
  @Override public long getPrimaryStatements() { return primaryStatements.sum(); }
  @Override public long getReplicaRoutes() { return replicaRoutes.sum(); }
  @Override public long getFallbackRoutes() { return fallbackRoutes.sum(); }
  @Override public long getRetries() { return retries.sum(); }
  @Override public long getReplicaAcquireFailures() { return replicaAcquireFailures.sum(); }
  @Override public long getWritePositionChecks() { return writePositionChecks.sum(); }
  @Override public long getSessionResets() { return sessionResets.sum(); }
  @Override public long getSessionsClosedForState() { return sessionsClosedForState.sum(); }

  @Override
  public int getFallbackActive() {
    HikariPoolMXBean bean = fallback.getHikariPoolMXBean();
    return bean == null ? 0 : bean.getActiveConnections();
  }

  @Override public int getFallbackPoolSize() { return config.fallbackPoolSize(); }
  @Override
  public boolean isLagAlert() {
    for (LagAlert a : alerts) {
      if (a.isFiring()) return true;
    }
    return false;
  }

  @Override
  public boolean isHeartbeatLeader() {
    return heartbeatWriter != null && heartbeatWriter.isLeader();
  }

  @Override
  public Map<String, Long> getClockOffsetMillis() {
    Map<String, Long> offsets = new LinkedHashMap<>();
    if (walSampler != null) putOffset(offsets, "primary", walSampler.clockOffset());
    for (ReplicaEndpoint r : replicas) putOffset(offsets, r.name, r.watcher.clockOffset());
    return offsets;
  }

  private static void putOffset(Map<String, Long> offsets, String server, ClockOffset o) {
    if (o.known()) offsets.put(server, Math.round(o.offsetMicros() / 1000.0));
  }

  /** The primary's clock offset estimate, null before the first sample or without replicas. */
  ClockOffset primaryClockOffset() {
    return walSampler == null ? null : walSampler.clockOffset();
  }

  @Override
  public String toString() {
    return "Router[" + config.applicationName() + ", replicas=" + replicas.length + "]";
  }
}
