package dev.omnium.jdbc;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.postgresql.PGProperty;
import org.postgresql.core.ServerVersion;

/**
 * One connection configuration, immutable and fully validated: built at connect time so a
 * bad key or value fails there, not on the first read. Merges like pgjdbc ({@code info}
 * first, URL parameters win), then splits the result into omnium settings and pgjdbc
 * properties, which pass through to every physical connection.
 */
final class OmniumConfig {

  private static final String APPLICATION_NAME = PGProperty.APPLICATION_NAME.getName();
  private static final String OPTIONS = PGProperty.OPTIONS.getName();
  private static final String ASSUME_MIN_SERVER_VERSION =
      PGProperty.ASSUME_MIN_SERVER_VERSION.getName();
  private static final String TARGET_SERVER_TYPE = PGProperty.TARGET_SERVER_TYPE.getName();
  private static final String USER = PGProperty.USER.getName();
  private static final String PASSWORD = PGProperty.PASSWORD.getName();
  /** pgjdbc's own host/port/database keys: the URL path decides those, never a property. */
  private static final List<String> LOCATION_KEYS = List.of(
      PGProperty.PG_HOST.getName(), PGProperty.PG_PORT.getName(), PGProperty.PG_DBNAME.getName());
  /** pgjdbc sends ApplicationName in the startup packet only from this version on. */
  private static final String MIN_SERVER_VERSION = "9.0";

  private final List<HostSpec> primaryHosts;
  private final String database;
  private final EnumMap<OmniumProperty, Object> settings;
  private final Map<String, String> passThrough;
  private final String applicationName;
  private final RouterKey routerKey;
  /** Every secret value (password, replicaPassword, sslpassword...): never printed. */
  private final Map<String, String> secrets;
  /** {@link #maskedUrl()}, once made. */
  private String maskedUrl;
  /** The JDBC defaults of a new logical connection that pgjdbc's properties set. */
  final ConnectionDefaults defaults;

  private OmniumConfig(List<HostSpec> primaryHosts, String database,
      EnumMap<OmniumProperty, Object> settings, Map<String, String> passThrough,
      ConnectionDefaults defaults) {
    this.defaults = defaults;
    this.primaryHosts = primaryHosts;
    this.database = database;
    this.settings = settings;
    this.passThrough = passThrough;
    this.applicationName = (String) settings.get(OmniumProperty.APPLICATION_NAME);
    this.routerKey = routerKey(primaryHosts, database, settings, passThrough);
    this.secrets = secretsOf(settings, passThrough);
  }

  /**
   * The sharing rule: everything but the credentials (every secret key) and the per-read
   * {@code maxAge}, which each logical connection takes from its own configuration.
   */
  private static RouterKey routerKey(List<HostSpec> primaryHosts, String database,
      EnumMap<OmniumProperty, Object> settings, Map<String, String> passThrough) {
    EnumMap<OmniumProperty, Object> shared = new EnumMap<>(settings);
    shared.remove(OmniumProperty.MAX_AGE);
    shared.keySet().removeIf(OmniumProperty::isSecret);
    TreeMap<String, String> pgjdbc = new TreeMap<>(passThrough);
    pgjdbc.keySet().removeIf(Secrets::isSecretKey);
    return new RouterKey(primaryHosts, database, Collections.unmodifiableMap(shared),
        Collections.unmodifiableMap(pgjdbc));
  }

  private static Map<String, String> secretsOf(EnumMap<OmniumProperty, Object> settings,
      Map<String, String> passThrough) {
    TreeMap<String, String> all = new TreeMap<>();
    for (Map.Entry<OmniumProperty, Object> e : settings.entrySet()) {
      if (e.getKey().isSecret() && e.getValue() != null) {
        all.put(e.getKey().getName(), e.getValue().toString());
      }
    }
    passThrough.forEach((k, v) -> {
      if (Secrets.isSecretKey(k)) all.put(k, v);
    });
    return Collections.unmodifiableMap(all);
  }

  /**
   * Parses and validates {@code url} merged with {@code info} (may be null).
   *
   * @throws SQLException SQLState 08001 for a malformed URL, an unknown URL key or a bad value
   */
  static OmniumConfig of(String url, Properties info) throws SQLException {
    OmniumUrl parsed = OmniumUrl.parse(url);

    Map<String, String> merged = new LinkedHashMap<>();
    if (info != null) {
      // Unknown keys from Properties pass silently: frameworks put odd things there.
      for (String key : new TreeMap<>(toMap(info)).keySet()) {
        merged.put(key, info.getProperty(key));
      }
    }
    for (Map.Entry<String, String> e : parsed.parameters().entrySet()) {
      checkUrlKey(e.getKey());
      merged.put(e.getKey(), e.getValue());
    }

    Properties omnium = new Properties();
    Map<String, String> passThrough = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : merged.entrySet()) {
      if (OmniumProperty.forName(e.getKey()) != null) {
        omnium.setProperty(e.getKey(), e.getValue());
      } else if (!LOCATION_KEYS.contains(e.getKey())) {
        passThrough.put(e.getKey(), e.getValue());
      }
    }

    EnumMap<OmniumProperty, Object> settings = new EnumMap<>(OmniumProperty.class);
    for (OmniumProperty p : OmniumProperty.values()) {
      settings.put(p, p.getValue(omnium));
    }
    // Only pgjdbc's ApplicationName given: keep it as the base, so existing configs keep
    // their name. Stored resolved, so routerKey, toString and propertyInfo agree.
    String pgjdbcName = passThrough.get(APPLICATION_NAME);
    if (pgjdbcName != null && !OmniumProperty.APPLICATION_NAME.isPresent(omnium)) {
      settings.put(OmniumProperty.APPLICATION_NAME, pgjdbcName);
    }
    return new OmniumConfig(parsed.hosts(), parsed.database(), settings,
        Collections.unmodifiableMap(passThrough), ConnectionDefaults.of(passThrough));
  }

  // ---- where ----

  List<HostSpec> primaryHosts() {
    return primaryHosts;
  }

  String database() {
    return database;
  }

  /** Replica endpoints; empty when none is configured. */
  @SuppressWarnings("unchecked")
  List<HostSpec> replicas() {
    return (List<HostSpec>) settings.get(OmniumProperty.REPLICA);
  }

  boolean hasReplicas() {
    return !replicas().isEmpty();
  }

  // ---- typed settings ----

  Duration maxAge() {
    return duration(OmniumProperty.MAX_AGE);
  }

  Duration heartbeatInterval() {
    return duration(OmniumProperty.HEARTBEAT_INTERVAL);
  }

  /** Validated identifier, optionally schema-qualified: safe to put into SQL unquoted. */
  String heartbeatTable() {
    return (String) settings.get(OmniumProperty.HEARTBEAT_TABLE);
  }

  boolean heartbeatWriter() {
    return (Boolean) settings.get(OmniumProperty.HEARTBEAT_WRITER);
  }

  /**
   * Base of application_name: omnium's {@code applicationName}, else pgjdbc's own
   * {@code ApplicationName} when only that was given (so existing configs keep their
   * name), else {@code omnium}.
   */
  String applicationName() {
    return applicationName;
  }

  Duration statementTimeout() {
    return duration(OmniumProperty.STATEMENT_TIMEOUT);
  }

  Duration replicaStatementTimeout() {
    return duration(OmniumProperty.REPLICA_STATEMENT_TIMEOUT);
  }

  Duration idleInTransactionTimeout() {
    return duration(OmniumProperty.IDLE_IN_TRANSACTION_TIMEOUT);
  }

  /** Null when unset (the server default applies); zero means explicitly disabled. */
  Duration lockTimeout() {
    return duration(OmniumProperty.LOCK_TIMEOUT);
  }

  int primaryPoolSize() {
    return size(OmniumProperty.PRIMARY_POOL_SIZE);
  }

  int replicaPoolSize() {
    return size(OmniumProperty.REPLICA_POOL_SIZE);
  }

  int fallbackPoolSize() {
    return size(OmniumProperty.FALLBACK_POOL_SIZE);
  }

  Duration poolTimeout() {
    return duration(OmniumProperty.POOL_TIMEOUT);
  }

  Duration replicaAcquireTimeout() {
    return duration(OmniumProperty.REPLICA_ACQUIRE_TIMEOUT);
  }

  Duration maxLifetime() {
    return duration(OmniumProperty.MAX_LIFETIME);
  }

  Duration poolIdleTimeout() {
    return duration(OmniumProperty.POOL_IDLE_TIMEOUT);
  }

  Duration clientTimeoutMargin() {
    return duration(OmniumProperty.CLIENT_TIMEOUT_MARGIN);
  }

  Duration routerIdleTimeout() {
    return duration(OmniumProperty.ROUTER_IDLE_TIMEOUT);
  }

  Duration lagAlertThreshold() {
    return duration(OmniumProperty.LAG_ALERT_THRESHOLD);
  }

  Duration lagAlertAfter() {
    return duration(OmniumProperty.LAG_ALERT_AFTER);
  }

  /** {@code off}, {@code thread} or {@code token}, always lower case. */
  String readYourWrites() {
    return (String) settings.get(OmniumProperty.READ_YOUR_WRITES);
  }

  Duration readYourWritesTtl() {
    return duration(OmniumProperty.READ_YOUR_WRITES_TTL);
  }

  /** The {@code options} the user gave for pgjdbc, or null. */
  String userOptions() {
    String o = passThrough.get(OPTIONS);
    return o == null || o.isBlank() ? null : o.trim();
  }

  /**
   * Whether read sessions may be pgjdbc-read-only ({@code BEGIN READ ONLY} per transaction): not
   * with the user's {@code readOnlyMode=always}, which would set it for the session instead.
   */
  boolean readOnlyBegin() {
    return !"always".equalsIgnoreCase(passThrough.get(PGProperty.READ_ONLY_MODE.getName()));
  }

  /** Session settings always per transaction ({@code pooler=transaction}), else detected. */
  boolean poolerTransaction() {
    return "transaction".equals(settings.get(OmniumProperty.POOLER));
  }

  // ---- physical connections ----

  /** {@code replication=database|true}: a replication connection, which omnium never routes. */
  boolean replication() {
    return passThrough.get(PGProperty.REPLICATION.getName()) != null;
  }

  /** The pgjdbc properties as the application gave them, for a connection pgjdbc makes alone. */
  Properties pgjdbcProperties() {
    Properties p = new Properties();
    passThrough.forEach(p::setProperty);
    return p;
  }

  /**
   * {@code jdbc:omnium:} URL of this configuration (primaries, database, replicas), passwords
   * masked: what a data source's connections answer to {@code getMetaData().getURL()}. Made once
   * (a benign race: any thread makes the same string).
   */
  String maskedUrl() {
    String u = maskedUrl;
    if (u == null) {
      StringBuilder sb = new StringBuilder("jdbc:omnium:")
          .append(primaryUrl().substring("jdbc:".length()));
      List<HostSpec> replicas = replicas();
      for (int i = 0; i < replicas.size(); i++) {
        sb.append(i == 0 ? (sb.indexOf("?") < 0 ? "?replica=" : "&replica=") : ",")
            .append(replicas.get(i));
      }
      maskedUrl = u = Secrets.maskUrl(sb.toString());
    }
    return u;
  }

  /** {@code jdbc:postgresql://h1:p1[,h2:p2]/db} for pgjdbc; credentials stay in properties. */
  String primaryUrl() {
    return pgjdbcUrl(primaryHosts);
  }

  /** One single-host pgjdbc URL per host of the primary list, in order. */
  List<String> primaryHostUrls() {
    List<String> urls = new ArrayList<>();
    for (HostSpec h : primaryHosts) urls.add(pgjdbcUrl(List.of(h)));
    return urls;
  }

  /** {@code jdbc:postgresql://h:p/db} for one replica. */
  String replicaUrl(HostSpec replica) {
    return pgjdbcUrl(List.of(replica));
  }

  /**
   * Fresh pgjdbc properties for a physical connection on {@code route}: every pass-through
   * property, plus the session settings in the startup packet (zero extra round trips).
   * Never contains an omnium key.
   */
  private static final String CURRENT_SCHEMA = "currentSchema";

  Properties physicalProperties(Route route) {
    Properties p = new Properties();
    passThrough.forEach(p::setProperty);
    // read-only is the logical connection's (its routing), never a physical session's own
    p.remove(ConnectionDefaults.READ_ONLY);
    boolean replicaSide = route == Route.REPLICA || route == Route.WATCHER;

    p.setProperty(APPLICATION_NAME, applicationName + suffix(route));
    String assumed = passThrough.get(ASSUME_MIN_SERVER_VERSION);
    if (assumed == null || ServerVersion.from(assumed).getVersionNum()
        < ServerVersion.from(MIN_SERVER_VERSION).getVersionNum()) {
      p.setProperty(ASSUME_MIN_SERVER_VERSION, MIN_SERVER_VERSION);
    }

    StringBuilder options = new StringBuilder();
    String userOptions = passThrough.get(OPTIONS);
    if (userOptions != null && !userOptions.isBlank()) {
      // The user's options first, ours after: the same setting given twice, the last wins.
      options.append(userOptions.trim()).append(' ');
    }
    sessionSettings(route).forEach((name, value) ->
        options.append("-c ").append(name).append('=').append(value).append(' '));
    options.setLength(options.length() - 1);
    if (route == Route.WATCHER || route == Route.HEARTBEAT) p.remove(CURRENT_SCHEMA);
    p.setProperty(OPTIONS, options.toString());

    if (replicaSide) {
      String replicaUser = (String) settings.get(OmniumProperty.REPLICA_USER);
      String replicaPassword = (String) settings.get(OmniumProperty.REPLICA_PASSWORD);
      if (replicaUser != null) {
        p.setProperty(USER, replicaUser);
      }
      if (replicaPassword != null) {
        p.setProperty(PASSWORD, replicaPassword);
      }
      // A user's targetServerType=primary (meant for the primary list) would refuse a standby.
      p.remove(TARGET_SERVER_TYPE);
    } else if (route == Route.FALLBACK) {
      // Its sessions start read-only, so pgjdbc's targetServerType=primary ("show
      // transaction_read_only") would take the primary for a standby: PgConnector.primaryAmong
      // tries each host itself and reads the role from in_hot_standby instead.
      p.remove(TARGET_SERVER_TYPE);
    } else if (primaryHosts.size() > 1 && !passThrough.containsKey(TARGET_SERVER_TYPE)) {
      // Every primary-side route (also fallback reads and the heartbeat writer) must land
      // on the primary of a multi-host list, never on a standby that happens to answer first.
      p.setProperty(TARGET_SERVER_TYPE, "primary");
    }
    return p;
  }

  /**
   * What every session of {@code route} must have set, name to value in server units (ms, on):
   * the startup packet's {@code -c} options, or what each transaction sets behind a pooler
   * ({@link StartupSettings}). The user's own {@code options} come before these in the packet.
   */
  Map<String, String> sessionSettings(Route route) {
    boolean replicaSide = route == Route.REPLICA || route == Route.WATCHER;
    Map<String, String> s = new LinkedHashMap<>();
    Duration statement = replicaSide ? replicaStatementTimeout() : statementTimeout();
    s.put("statement_timeout", Long.toString(statement.toMillis()));
    s.put("idle_in_transaction_session_timeout",
        Long.toString(idleInTransactionTimeout().toMillis()));
    if (!replicaSide && lockTimeout() != null) {
      s.put("lock_timeout", Long.toString(lockTimeout().toMillis()));
    }
    if (route == Route.REPLICA || route == Route.FALLBACK) {
      // Writes then fail with 25006 on both read routes alike.
      s.put("default_transaction_read_only", "on");
    }
    if (route == Route.WATCHER || route == Route.HEARTBEAT) {
      // The heartbeat table must resolve the same way for every writer and watcher, whatever
      // search_path the application sets for its own sessions: unqualified means public.
      s.put("search_path", "public");
    }
    return s;
  }

  /**
   * The secret properties of a physical connection on {@code route} (password, sslpassword...),
   * as {@link #physicalProperties} sets them: what a credential rotation replaces.
   */
  Map<String, String> secrets(Route route) {
    Properties p = physicalProperties(route);
    TreeMap<String, String> out = new TreeMap<>();
    for (String key : p.stringPropertyNames()) {
      if (Secrets.isSecretKey(key)) out.put(key, p.getProperty(key));
    }
    return out;
  }

  /** Equal for configurations with the same credentials; compare only, never print. */
  Object secretsKey() {
    return secrets;
  }

  /** The primary user ({@code user} property), or null when pgjdbc's default applies. */
  String user() {
    return passThrough.get(USER);
  }

  /**
   * What {@code fallbackPoolSize} caps, once per process: the primary hosts, database and user.
   */
  Object fallbackBudgetKey() {
    return List.of(primaryHosts, database, String.valueOf(user()));
  }

  // ---- identity and introspection ----

  /**
   * Equal for configurations that must share one router: same hosts, database, every
   * omnium setting and every pass-through property except the credentials (any secret key:
   * password, replicaPassword, sslpassword...) and {@code maxAge}. Its {@code toString()}
   * masks secrets.
   */
  Object routerKey() {
    return routerKey;
  }

  /** One entry per omnium key with its current value; secret values are never returned. */
  DriverPropertyInfo[] propertyInfo() {
    OmniumProperty[] all = OmniumProperty.values();
    DriverPropertyInfo[] infos = new DriverPropertyInfo[all.length];
    for (int i = 0; i < all.length; i++) {
      OmniumProperty p = all[i];
      DriverPropertyInfo info = new DriverPropertyInfo(p.getName(),
          p.isSecret() ? null : OmniumProperty.render(settings.get(p)));
      info.description = p.getDescription();
      info.choices = p.getChoices();
      info.required = false;
      infos[i] = info;
    }
    return infos;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("OmniumConfig{primary=").append(primaryHosts)
        .append(", database=").append(database);
    for (Map.Entry<OmniumProperty, Object> e : settings.entrySet()) {
      String key = e.getKey().getName();
      sb.append(", ").append(key).append('=')
          .append(Secrets.mask(key, OmniumProperty.render(e.getValue())));
    }
    return sb.append(", pgjdbc=").append(Secrets.maskMap(passThrough)).append('}').toString();
  }

  // ---- internals ----

  private static void checkUrlKey(String key) throws SQLException {
    if (OmniumProperty.forName(key) != null) {
      return;
    }
    if (LOCATION_KEYS.contains(key)) {
      throw new SQLNonTransientConnectionException("URL parameter " + key
          + " is not allowed: hosts, ports and the database go in the URL path ("
          + OmniumUrl.FORM + ")", "08001");
    }
    if (PGProperty.forName(key) != null) {
      return;
    }
    StringBuilder msg = new StringBuilder("Unknown URL parameter ").append(key);
    String suggestion = caseInsensitiveMatch(key);
    if (suggestion != null) {
      msg.append(": did you mean ").append(suggestion).append('?');
    }
    msg.append(" (omnium keys: ");
    OmniumProperty[] all = OmniumProperty.values();
    for (int i = 0; i < all.length; i++) {
      msg.append(i == 0 ? "" : ", ").append(all[i].getName());
    }
    msg.append("; any pgjdbc property is passed through)");
    throw new SQLNonTransientConnectionException(msg.toString(), "08001");
  }

  /** An omnium key, else a pgjdbc key, equal to {@code key} but for case; or null. */
  private static String caseInsensitiveMatch(String key) {
    OmniumProperty omnium = OmniumProperty.forNameIgnoreCase(key);
    if (omnium != null) {
      return omnium.getName();
    }
    for (PGProperty p : PGProperty.values()) {
      if (p.getName().equalsIgnoreCase(key)) {
        return p.getName();
      }
    }
    return null;
  }

  private static Map<String, String> toMap(Properties info) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String k : info.stringPropertyNames()) { // includes defaults, skips non-strings
      m.put(k, info.getProperty(k));
    }
    return m;
  }

  private static String suffix(Route route) {
    switch (route) {
      case PRIMARY:
        return "";
      case REPLICA:
        return ":replica";
      case FALLBACK:
        return ":fallback";
      case WATCHER:
        return ":watcher";
      default:
        return ":heartbeat";
    }
  }

  private String pgjdbcUrl(List<HostSpec> hosts) {
    StringBuilder sb = new StringBuilder("jdbc:postgresql://");
    for (int i = 0; i < hosts.size(); i++) {
      sb.append(i == 0 ? "" : ",").append(hosts.get(i));
    }
    // pgjdbc decodes the database with URLDecoder: encode it the matching way.
    return sb.append('/').append(URLEncoder.encode(database, StandardCharsets.UTF_8)).toString();
  }

  private Duration duration(OmniumProperty p) {
    return (Duration) settings.get(p);
  }

  private int size(OmniumProperty p) {
    return (Integer) settings.get(p);
  }

  /** Value object behind {@link #routerKey()}. */
  private record RouterKey(List<HostSpec> primaryHosts, String database,
      Map<OmniumProperty, Object> settings, Map<String, String> passThrough) {

    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder("RouterKey{").append(primaryHosts).append('/')
          .append(database);
      for (Map.Entry<OmniumProperty, Object> e : settings.entrySet()) {
        String key = e.getKey().getName();
        sb.append(", ").append(key).append('=')
            .append(Secrets.mask(key, OmniumProperty.render(e.getValue())));
      }
      return sb.append(", pgjdbc=").append(Secrets.maskMap(passThrough)).append('}').toString();
    }
  }
}
