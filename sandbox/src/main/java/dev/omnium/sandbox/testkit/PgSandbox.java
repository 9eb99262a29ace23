package dev.omnium.sandbox.testkit;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.HaProxy;
import dev.omnium.sandbox.Heartbeat;
import dev.omnium.sandbox.PgBouncer;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.TlsFiles;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that gives a test class a real sandbox cluster: it starts the primary and its
 * streaming replicas (PostgreSQL version from {@code omnium.pg.version}, which the pg18/pg15
 * Failsafe executions set), runs the class's setup SQL on the primary, starts the test-side
 * {@link Heartbeat} and waits until every replica has caught up; afterwards it shuts the omnium
 * driver down ({@link OmniumDriver#shutdown()}), stops the heartbeat and stops every server, also
 * when a test failed. On a failure it prints the server logs (see {@link PgClusterLogsOnFailure}).
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
 *     .sql("CREATE TABLE items (id int PRIMARY KEY, name text)").build();
 *
 * @Test
 * void readsGoToTheReplica() throws Exception {
 *   try (Connection c = DriverManager.getConnection(SANDBOX.url("app", "maxAge=1s"))) {
 *     c.setReadOnly(true);
 *     Poll.until(Duration.ofSeconds(10), "a fresh replica", () -> Where.of(c).inRecovery());
 *   }
 * }
 * }</pre>
 *
 * <p>Registered on a {@code static} field the cluster lives for the whole class (started before
 * any {@code @BeforeAll} method runs, stopped after every {@code @AfterAll} method); on an
 * instance field, one cluster per test.
 */
public final class PgSandbox extends PgClusterLogsOnFailure
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  /** The heartbeat period unless the builder says otherwise. */
  public static final Duration HEARTBEAT_PERIOD = Duration.ofMillis(100);

  private final Builder config;
  private volatile PgCluster cluster;
  private volatile Heartbeat heartbeat;
  private volatile Map<PgNode, PgBouncer> bouncers = Map.of();
  private volatile HaProxy readerEndpoint;
  private volatile boolean perTest;

  private PgSandbox(Builder config) {
    this.config = config;
  }

  /** @return a builder: one replica, trust authentication, a heartbeat every 100 ms */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start();
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    if (cluster == null) {
      perTest = true;
      start();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (perTest) {
      stop();
    } else if (config.healAfterEach && cluster != null) {
      heal();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    stop();
  }

  /**
   * Starts the cluster now (the extension callbacks call this; a benchmark or a main method may
   * call it directly and {@link #stop()} in a finally block).
   *
   * @throws SQLException when the setup SQL fails (the cluster is then stopped)
   */
  public void start() throws SQLException {
    long t0 = System.nanoTime();
    PgCluster.Builder b = PgCluster.builder().replicas(config.replicas)
        .requirePasswords(config.requirePasswords);
    if (config.version != null) {
      b.version(config.version);
    }
    if (config.tls) {
      b.tls();
    }
    if (config.ownSystemIdentifier) {
      b.ownSystemIdentifier();
    }
    config.settings.forEach(b::setting);
    PgCluster started = b.start();
    try {
      try (Connection c = started.connect(started.primary()); Statement st = c.createStatement()) {
        for (Map.Entry<String, String> role : config.roles.entrySet()) {
          createRole(st, role.getKey(), role.getValue());
        }
        for (String s : config.sql) {
          st.execute(s);
        }
      }
      if (config.heartbeat != null) {
        heartbeat = Heartbeat.start(started, config.heartbeat); // waits for every replica
      } else if (config.heartbeatTable) {
        Heartbeat.createTable(started); // waits for every replica
      } else {
        for (PgNode r : started.replicas()) {
          started.awaitCaughtUp(r);
        }
      }
      if (config.pgbouncer != null) {
        Map<PgNode, PgBouncer> in = new LinkedHashMap<>();
        in.put(started.primary(), started.startPgBouncer(started.primary(), config.pgbouncer,
            config.pgbouncerSettings));
        for (PgNode r : started.replicas()) {
          in.put(r, started.startPgBouncer(r, config.pgbouncer, config.pgbouncerSettings));
        }
        bouncers = Map.copyOf(in);
      }
      if (config.readerEndpoint) {
        readerEndpoint = started.startHaProxy(started.replicas());
      }
    } catch (SQLException | RuntimeException | Error e) {
      started.close();
      throw e;
    }
    cluster = started;
    System.out.printf("sandbox: PostgreSQL %s primary + %d replica(s) up in %d ms%n",
        started.version(), config.replicas, (System.nanoTime() - t0) / 1_000_000);
  }

  /** A login role that may read and write what the superuser creates in schema public. */
  private static void createRole(Statement st, String name, String password) throws SQLException {
    String role = quoteIdent(name);
    st.execute("CREATE ROLE " + role + " LOGIN PASSWORD " + quoteLiteral(password));
    st.execute("GRANT USAGE, CREATE ON SCHEMA public TO " + role);
    st.execute("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE,"
        + " TRUNCATE ON TABLES TO " + role);
    st.execute("GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public TO "
        + role);
  }

  private static String quoteIdent(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }

  private static String quoteLiteral(String value) {
    return "'" + value.replace("'", "''") + "'";
  }

  /**
   * Shuts the omnium driver down (every router, pool and watcher in this JVM), stops the heartbeat
   * and stops every server. Idempotent.
   */
  public void stop() {
    PgCluster c = cluster;
    Heartbeat h = heartbeat;
    cluster = null;
    heartbeat = null;
    bouncers = Map.of();
    readerEndpoint = null;
    try {
      OmniumDriver.shutdown();
    } finally {
      try {
        if (h != null) {
          h.close();
        }
      } finally {
        if (c != null) {
          c.close();
        }
      }
    }
  }

  /**
   * @return the running cluster
   * @throws IllegalStateException outside the tests of the class that registered this extension
   */
  public PgCluster cluster() {
    PgCluster c = cluster;
    if (c == null) {
      throw new IllegalStateException("the sandbox cluster is not running: register PgSandbox"
          + " with @RegisterExtension and use it from tests or @BeforeAll/@BeforeEach methods");
    }
    return c;
  }

  /** @return the primary */
  public PgNode primary() {
    return cluster().primary();
  }

  /** @return the first replica */
  public PgNode replica() {
    return cluster().replica(0);
  }

  /**
   * @param index 0-based
   * @return replica {@code index}
   */
  public PgNode replica(int index) {
    return cluster().replica(index);
  }

  /** @return the test-side heartbeat, or null when the builder turned it off */
  public Heartbeat heartbeat() {
    return heartbeat;
  }

  /**
   * The URL a user writes, with every replica: {@code
   * jdbc:omnium:postgresql://PRIMARY/omnium?replica=R1,R2&applicationName=APP&user=postgres}, then
   * {@code &password=...} when the cluster requires passwords, then {@code &extra}.
   *
   * @param app the applicationName (one per test keeps routers and sessions apart)
   * @param extra more keys ({@code maxAge=1s&heartbeatInterval=200ms}), or null
   * @return the URL
   */
  public String url(String app, String extra) {
    String replicas = cluster().replicas().stream().map(PgNode::hostPort)
        .collect(Collectors.joining(","));
    return primaryUrl(app, replicas.isEmpty() ? extra : join("replica=" + replicas, extra));
  }

  /**
   * The PgBouncer in front of {@code node} (the builder's {@link Builder#pgbouncer}).
   *
   * @param node the primary or a replica
   * @return its bouncer
   * @throws IllegalStateException when the builder started no bouncers
   */
  public PgBouncer bouncer(PgNode node) {
    PgBouncer b = bouncers.get(node);
    if (b == null) {
      throw new IllegalStateException("no PgBouncer in front of " + node
          + ": use PgSandbox.builder().pgbouncer(mode)");
    }
    return b;
  }

  /**
   * The URL a user writes behind PgBouncer: the primary's bouncer, every replica's bouncer in
   * {@code replica=}, {@code prepareThreshold=0} (what PgBouncer before 1.21 needs with
   * transaction pooling, and nothing else), then credentials and {@code extra} as {@link #url}.
   *
   * @param app the applicationName
   * @param extra more keys, or null
   * @return the URL
   */
  public String bouncedUrl(String app, String extra) {
    PgCluster c = cluster();
    String replicas = c.replicas().stream().map(r -> bouncer(r).hostPort())
        .collect(Collectors.joining(","));
    String url = "jdbc:omnium:postgresql://" + bouncer(c.primary()).hostPort() + "/"
        + c.database() + "?applicationName=" + app + "&user=" + c.user();
    String password = password();
    if (password != null) {
      url += "&password=" + password;
    }
    url += "&prepareThreshold=0";
    if (!replicas.isEmpty()) {
      url += "&replica=" + replicas;
    }
    return extra == null || extra.isEmpty() ? url : url + "&" + extra;
  }

  /**
   * @return the HAProxy over every replica (the builder's {@link Builder#readerEndpoint})
   * @throws IllegalStateException when the builder started none
   */
  public HaProxy readerEndpoint() {
    HaProxy h = readerEndpoint;
    if (h == null) {
      throw new IllegalStateException(
          "no reader endpoint: use PgSandbox.builder().readerEndpoint()");
    }
    return h;
  }

  /**
   * The URL with the reader endpoint as the one replica: {@code replica=HAPROXY}.
   *
   * @param app the applicationName
   * @param extra more keys, or null
   * @return the URL
   */
  public String endpointUrl(String app, String extra) {
    return primaryUrl(app, join("replica=" + readerEndpoint().hostPort(), extra));
  }

  /**
   * The URL with every replica but without credentials, for code that passes them apart (Spring's
   * {@code spring.datasource.username}, HikariCP's {@code setUsername}, Flyway's user argument):
   * {@code jdbc:omnium:postgresql://PRIMARY/omnium?applicationName=APP&replica=R1,R2&extra}.
   *
   * @param app the applicationName
   * @param extra more keys, or null
   * @return the URL
   */
  public String bareUrl(String app, String extra) {
    PgCluster c = cluster();
    String replicas = c.replicas().stream().map(PgNode::hostPort)
        .collect(Collectors.joining(","));
    String url = "jdbc:omnium:postgresql://" + c.primary().hostPort() + "/" + c.database()
        + "?applicationName=" + app + (replicas.isEmpty() ? "" : "&replica=" + replicas);
    return extra == null || extra.isEmpty() ? url : url + "&" + extra;
  }

  /**
   * The same URL without {@code replica=}: the caller names the replicas itself (or none).
   *
   * @param app the applicationName
   * @param extra more keys, or null
   * @return the URL
   */
  public String primaryUrl(String app, String extra) {
    PgCluster c = cluster();
    String url = "jdbc:omnium:postgresql://" + c.primary().hostPort() + "/" + c.database()
        + "?applicationName=" + app + "&user=" + c.user();
    String password = password();
    if (password != null) {
      url += "&password=" + password;
    }
    return extra == null || extra.isEmpty() ? url : url + "&" + extra;
  }

  /**
   * The URL a user writes, with every replica, as {@code user} with {@code password} (a role of
   * {@link Builder#role}, or a wrong password on purpose): {@code
   * jdbc:omnium:postgresql://PRIMARY/omnium?applicationName=APP&user=U&password=P&replica=R&extra}.
   *
   * @param user the role
   * @param password its password (URL-encoded here), or null for none
   * @param app the applicationName
   * @param extra more keys, or null
   * @return the URL
   */
  public String urlAs(String user, String password, String app, String extra) {
    String credentials = "user=" + encode(user)
        + (password == null ? "" : "&password=" + encode(password));
    return bareUrl(app, extra == null || extra.isEmpty() ? credentials : credentials + "&" + extra);
  }

  /**
   * The plain pgjdbc URL of a node with the same parameters, for the oracle side of a comparison:
   * {@code jdbc:postgresql://NODE/omnium?ApplicationName=APP&user=U&password=P&extra}.
   *
   * @param node the server
   * @param user the role
   * @param password its password, or null
   * @param app the ApplicationName
   * @param extra more pgjdbc parameters, or null
   * @return the URL
   */
  public String pgjdbcUrlAs(PgNode node, String user, String password, String app, String extra) {
    String url = node.jdbcUrl() + "?ApplicationName=" + encode(app) + "&user=" + encode(user)
        + (password == null ? "" : "&password=" + encode(password));
    return extra == null || extra.isEmpty() ? url : url + "&" + extra;
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  /**
   * @return the certificates of a TLS sandbox ({@link Builder#tls()}), else null
   */
  public TlsFiles tls() {
    return cluster().tls();
  }

  /**
   * @return the password the URLs carry: the cluster's when it requires passwords, else the
   *     builder's {@link Builder#urlPassword}, else null
   */
  public String password() {
    String p = cluster().password();
    return p != null ? p : config.urlPassword;
  }

  private static String join(String a, String b) {
    return b == null || b.isEmpty() ? a : a + "&" + b;
  }

  /**
   * Runs SQL on the primary through plain pgjdbc (fixtures, not the code under test).
   *
   * @param sql statements, run in order in autocommit
   * @throws SQLException when one fails
   */
  public void execOnPrimary(String... sql) throws SQLException {
    try (Connection c = cluster().connect(primary()); Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  /**
   * A single value read straight from a node through plain pgjdbc.
   *
   * @param node the server to ask
   * @param sql a query; {@code ?} parameters are bound from {@code params}
   * @param params the parameters
   * @return the first column of the first row as a string, or null when there is no row
   * @throws SQLException when the query fails
   */
  public String queryOne(PgNode node, String sql, Object... params) throws SQLException {
    try (Connection c = cluster().connect(node); PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** Waits until every replica has replayed everything the primary has written so far. */
  public void awaitCaughtUp() {
    PgCluster c = cluster();
    for (PgNode r : c.replicas()) {
      c.awaitCaughtUp(r);
    }
  }

  /**
   * Undoes the replica faults a test may have injected, for {@code @AfterEach}: thaws, starts and
   * resumes replay on every replica, then waits until each has caught up.
   */
  public void heal() {
    PgCluster c = cluster();
    for (PgNode r : c.replicas()) {
      c.thaw(r);
      c.start(r);
      c.resumeReplay(r);
      c.awaitCaughtUp(r);
    }
  }

  /**
   * @param node the server to ask
   * @param applicationName the exact application_name
   * @param state a {@code pg_stat_activity.state}, e.g. {@code idle in transaction}
   * @return how many sessions of it are in that state
   * @throws SQLException when the server cannot be asked
   */
  public int sessions(PgNode node, String applicationName, String state) throws SQLException {
    return Sessions.inState(cluster(), node, applicationName, state);
  }

  @Override
  public String toString() {
    PgCluster c = cluster;
    return "PgSandbox[" + (c == null ? "not running" : c) + "]";
  }

  /** What cluster to start; {@link #build()} makes the extension. */
  public static final class Builder {
    private int replicas = 1;
    private boolean requirePasswords;
    private String version;
    private Duration heartbeat = HEARTBEAT_PERIOD;
    private boolean heartbeatTable = true;
    private boolean healAfterEach;
    private String urlPassword;
    private boolean tls;
    private boolean ownSystemIdentifier;
    private final Map<String, String> roles = new LinkedHashMap<>();
    private PgBouncer.Mode pgbouncer;
    private final Map<String, String> pgbouncerSettings = new LinkedHashMap<>();
    private boolean readerEndpoint;
    private final Map<String, String> settings = new LinkedHashMap<>();
    private final List<String> sql = new ArrayList<>();

    private Builder() { }

    /**
     * @param count streaming replicas (0 or more)
     * @return this
     */
    public Builder replicas(int count) {
      if (count < 0) {
        throw new IllegalArgumentException("replicas must be >= 0, got " + count);
      }
      this.replicas = count;
      return this;
    }

    /**
     * SCRAM passwords on TCP (the URLs then carry the password).
     *
     * @return this
     */
    public Builder requirePasswords() {
      this.requirePasswords = true;
      return this;
    }

    /**
     * A login role besides the superuser, created before the builder's SQL: it may use schema
     * public and read and write every table the superuser creates there (the heartbeat table
     * included). With {@link #requirePasswords()} it logs in with {@code password} by
     * scram-sha-256; {@link PgSandbox#urlAs} builds its URLs.
     *
     * @param name the role
     * @param password its password
     * @return this
     */
    public Builder role(String name, String password) {
      roles.put(name, password);
      return this;
    }

    /**
     * TLS on every node, with certificates made at start ({@link TlsFiles}):
     * TCP connections must use TLS; {@link PgSandbox#tls()} names the authority to verify with.
     *
     * @return this
     */
    public Builder tls() {
      this.tls = true;
      return this;
    }

    /**
     * A system identifier no other sandbox cluster has (its own initdb; see
     * {@link PgCluster.Builder#ownSystemIdentifier()}): a different cluster, not a copy.
     *
     * @return this
     */
    public Builder ownSystemIdentifier() {
      this.ownSystemIdentifier = true;
      return this;
    }

    /**
     * @param version "18" or "15"; by default {@code omnium.pg.version} decides
     * @return this
     */
    public Builder version(String version) {
      this.version = version;
      return this;
    }

    /**
     * @param name a postgresql.conf setting
     * @param value its value
     * @return this
     */
    public Builder setting(String name, String value) {
      settings.put(name, value);
      return this;
    }

    /**
     * @param period how often the test-side heartbeat updates {@code replica_heartbeat}
     * @return this
     */
    public Builder heartbeat(Duration period) {
      this.heartbeat = period;
      return this;
    }

    /**
     * No test-side heartbeat (for tests of the driver's own writer, or of a missing table).
     *
     * @return this
     */
    public Builder withoutHeartbeat() {
      this.heartbeat = null;
      this.heartbeatTable = false;
      return this;
    }

    /**
     * Creates the heartbeat table and its row but starts no test-side writer (for tests where the
     * driver's own writer, {@code heartbeatWriter=true}, keeps it beating).
     *
     * @return this
     */
    public Builder heartbeatTableOnly() {
      this.heartbeat = null;
      this.heartbeatTable = true;
      return this;
    }

    /**
     * A password the URLs carry even when the cluster trusts every connection (so a test can look
     * for it in logs and messages); a cluster that requires passwords uses its own.
     *
     * @param password the password
     * @return this
     */
    public Builder urlPassword(String password) {
      this.urlPassword = password;
      return this;
    }

    /**
     * After every test (after its {@code @AfterEach} methods), {@link PgSandbox#heal()} the
     * replicas, so a fault one test injected never reaches the next.
     *
     * @return this
     */
    public Builder healAfterEach() {
      this.healAfterEach = true;
      return this;
    }

    /**
     * @param statements SQL run on the primary once the cluster is up, before the replicas are
     *     awaited (so the replicas have its effects when the first test starts)
     * @return this
     */
    public Builder sql(String... statements) {
      sql.addAll(List.of(statements));
      return this;
    }

    /**
     * A PgBouncer in front of every node (see {@link PgCluster#startPgBouncer}), started once the
     * setup SQL ran; {@link PgSandbox#bouncedUrl} reaches the cluster through them.
     *
     * @param mode session or transaction pooling
     * @return this
     */
    public Builder pgbouncer(PgBouncer.Mode mode) {
      this.pgbouncer = mode;
      return this;
    }

    /**
     * A setting every PgBouncer gets beyond its defaults, e.g.
     * {@code ignore_startup_parameters = options}.
     *
     * @param name a {@code [pgbouncer]} setting
     * @param value its value
     * @return this
     */
    public Builder pgbouncerSetting(String name, String value) {
      pgbouncerSettings.put(name, value);
      return this;
    }

    /**
     * An HAProxy balancing round robin over every replica: one reader endpoint
     * ({@link PgSandbox#endpointUrl}).
     *
     * @return this
     */
    public Builder readerEndpoint() {
      this.readerEndpoint = true;
      return this;
    }

    /** @return the extension, to register with {@code @RegisterExtension} */
    public PgSandbox build() {
      return new PgSandbox(this);
    }
  }
}
