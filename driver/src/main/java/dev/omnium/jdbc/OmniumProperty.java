package dev.omnium.jdbc;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * Every omnium key, in one place (modelled on pgjdbc's {@code PGProperty}): name, default,
 * kind, choices and a one-line description. {@code Driver.getPropertyInfo}, the README and
 * {@link OmniumConfig} all read this enum, so a key cannot exist in one and not the others.
 */
enum OmniumProperty {

  REPLICA("replica", null, Kind.HOSTS,
      "Replica endpoints host[:port][,host[:port]...], same database and credentials; none:"
          + " every read runs on the primary through the fallback pool"),
  REPLICA_USER("replicaUser", null, Kind.STRING,
      "User for replica and lag-watcher connections (default: user)"),
  REPLICA_PASSWORD("replicaPassword", null, Kind.STRING,
      "Password for replica and lag-watcher connections (default: password)"),
  MAX_AGE("maxAge", "5s", Kind.DURATION,
      "Largest staleness a read-only transaction accepts"),
  HEARTBEAT_INTERVAL("heartbeatInterval", "1s", Kind.DURATION,
      "How often lag is read on each replica (and written, for the heartbeat writer)"),
  HEARTBEAT_TABLE("heartbeatTable", "replica_heartbeat", Kind.IDENTIFIER,
      "Heartbeat table, optionally schema-qualified: (id int PRIMARY KEY CHECK (id = 1), beat_at"
          + " timestamptz NOT NULL)"),
  HEARTBEAT_WRITER("heartbeatWriter", "false", Kind.BOOLEAN,
      "Whether this process competes (advisory lock) to write the heartbeat; one writer per"
          + " primary is elected"),
  APPLICATION_NAME("applicationName", "omnium", Kind.STRING,
      "Base of application_name; physical connections add the route, e.g. api, api:replica,"
          + " api:fallback"),
  STATEMENT_TIMEOUT("statementTimeout", "15s", Kind.DURATION,
      "statement_timeout of primary connections"),
  REPLICA_STATEMENT_TIMEOUT("replicaStatementTimeout", "5s", Kind.DURATION,
      "statement_timeout of replica connections"),
  IDLE_IN_TRANSACTION_TIMEOUT("idleInTransactionTimeout", "60s", Kind.DURATION,
      "idle_in_transaction_session_timeout of every connection"),
  LOCK_TIMEOUT("lockTimeout", null, Kind.DURATION,
      "lock_timeout of primary connections, when set (0 disables)"),
  PRIMARY_POOL_SIZE("primaryPoolSize", "15", Kind.SIZE,
      "Internal primary pool size (DataSource mode only)"),
  REPLICA_POOL_SIZE("replicaPoolSize", "8", Kind.SIZE,
      "Pool size per replica, per process"),
  FALLBACK_POOL_SIZE("fallbackPoolSize", "4", Kind.SIZE,
      "Hard cap on read-only connections to the primary, per process"),
  POOL_TIMEOUT("poolTimeout", "10s", Kind.DURATION,
      "Longest wait for a pooled connection"),
  REPLICA_ACQUIRE_TIMEOUT("replicaAcquireTimeout", "1s", Kind.DURATION,
      "Longest a read waits for a replica connection before it takes the fallback route"),
  MAX_LIFETIME("maxLifetime", "30m", Kind.DURATION,
      "Physical connections are recycled after this long"),
  POOL_IDLE_TIMEOUT("poolIdleTimeout", "1m", Kind.DURATION,
      "Replica and fallback pools close a session unused this long (at least 10s); an idle"
          + " process keeps one replica session per replica"),
  CLIENT_TIMEOUT_MARGIN("clientTimeoutMargin", "2s", Kind.DURATION,
      "Client-side bound of every route: socketTimeout = the route's statement timeout"
          + " + this margin (primary and fallback: statementTimeout, replica:"
          + " replicaStatementTimeout), unless socketTimeout is given"),
  ROUTER_IDLE_TIMEOUT("routerIdleTimeout", "10m", Kind.DURATION,
      "Driver mode: a router (pools, watchers, JMX bean) no logical connection has held"
          + " for this long closes itself"),
  LAG_ALERT_THRESHOLD("lagAlertThreshold", "10s", Kind.DURATION,
      "Replica lag above which the alert clock starts"),
  LAG_ALERT_AFTER("lagAlertAfter", "60s", Kind.DURATION,
      "Alert when lag stays above lagAlertThreshold this long"),
  READ_YOUR_WRITES("readYourWrites", "off", Kind.CHOICE, new String[] {"off", "thread", "token"},
      "Read-your-writes: off, thread (reads after a write on the same thread stay on the"
          + " primary) or token"),
  READ_YOUR_WRITES_TTL("readYourWritesTtl", "30s", Kind.DURATION,
      "How long after a write readYourWrites keeps reads on the primary"),
  POOLER("pooler", "auto", Kind.CHOICE, new String[] {"auto", "transaction"},
      "Session settings (timeouts, read-only) travel in the startup packet; auto: where a server"
          + " refuses or drops them (PgBouncer), once per session if the pooler is proven to pin"
          + " and reset sessions (session pooling), else per transaction; transaction: always per"
          + " transaction (RDS Proxy, a pooler that passes startup options on)");

  /** Value kinds; {@link #expected} is the accepted form quoted in error messages. */
  enum Kind {
    DURATION("a duration such as 250ms, 5s, 2m, or plain milliseconds"),
    SIZE("a whole number of at least 1"),
    BOOLEAN("true or false"),
    STRING("any text"),
    HOSTS("host[:port][,host[:port]...], IPv6 in brackets such as [::1]:5432"),
    IDENTIFIER("a table name such as replica_heartbeat or schema.replica_heartbeat"),
    CHOICE("one of the listed choices");

    final String expected;

    Kind(String expected) {
      this.expected = expected;
    }
  }

  /** PostgreSQL keeps these timeouts in an int of milliseconds; more is a FATAL at connect. */
  private static final long SERVER_TIMEOUT_MAX_MS = Integer.MAX_VALUE;
  /** HikariCP silently replaces a connectionTimeout under 250 ms by 30 s: refuse it instead. */
  private static final Duration HIKARI_TIMEOUT_FLOOR = Duration.ofMillis(250);
  /** HikariCP silently replaces a maxLifetime under 30 s by 30 min: refuse it instead. */
  private static final Duration HIKARI_LIFETIME_FLOOR = Duration.ofSeconds(30);
  /** HikariCP silently replaces an idleTimeout under 10 s by 10 min: refuse it instead. */
  private static final Duration HIKARI_IDLE_FLOOR = Duration.ofSeconds(10);

  private static final Pattern IDENTIFIER =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

  private static final Map<String, OmniumProperty> BY_NAME = new HashMap<>();

  static {
    // Fail fast at class init, like pgjdbc: a duplicate (even by case, which would make
    // the "did you mean" suggestion ambiguous) is a programming error.
    Map<String, OmniumProperty> byLowerCase = new HashMap<>();
    for (OmniumProperty p : values()) {
      if (BY_NAME.put(p.name, p) != null
          || byLowerCase.put(p.name.toLowerCase(Locale.ROOT), p) != null) {
        throw new IllegalStateException("Duplicate OmniumProperty name: " + p.name);
      }
    }
  }

  private final String name;
  private final String defaultValue;
  private final Kind kind;
  private final String[] choices;
  private final String description;

  OmniumProperty(String name, String defaultValue, Kind kind, String description) {
    this(name, defaultValue, kind, null, description);
  }

  OmniumProperty(String name, String defaultValue, Kind kind, String[] choices,
      String description) {
    this.name = name;
    this.defaultValue = defaultValue;
    this.kind = kind;
    this.choices = choices;
    this.description = description;
  }

  String getName() {
    return name;
  }

  /** The default as text, or null when the key has none (replica, replicaUser, lockTimeout...). */
  String getDefaultValue() {
    return defaultValue;
  }

  Kind getKind() {
    return kind;
  }

  /** Allowed values for CHOICE and BOOLEAN keys, else null; a fresh copy. */
  String[] getChoices() {
    if (kind == Kind.BOOLEAN) {
      return new String[] {"true", "false"};
    }
    return choices == null ? null : choices.clone();
  }

  String getDescription() {
    return description;
  }

  /** True for keys whose value must never be shown. */
  boolean isSecret() {
    return Secrets.isSecretKey(name);
  }

  /** The accepted form, as quoted in error messages. */
  String expected() {
    return kind == Kind.CHOICE ? "one of " + String.join(", ", choices) : kind.expected;
  }

  /** Exact, case-sensitive lookup (Properties keys are case-sensitive); null if unknown. */
  static OmniumProperty forName(String name) {
    return name == null ? null : BY_NAME.get(name);
  }

  /** The omnium key equal to {@code name} ignoring case, or null: feeds "did you mean". */
  static OmniumProperty forNameIgnoreCase(String name) {
    if (name == null) {
      return null;
    }
    for (OmniumProperty p : values()) {
      if (p.name.equalsIgnoreCase(name)) {
        return p;
      }
    }
    return null;
  }

  /** The raw value set in {@code props}, or null when absent. */
  String getRaw(Properties props) {
    return props == null ? null : props.getProperty(name);
  }

  boolean isPresent(Properties props) {
    return getRaw(props) != null;
  }

  /**
   * The value as text, validated for its kind, or the default (may be null). CHOICE values
   * come back in their canonical lower-case spelling.
   */
  String get(Properties props) throws SQLException {
    String raw = getRaw(props);
    if (raw == null) {
      return defaultValue;
    }
    switch (kind) {
      case DURATION:
        getDuration(props);
        return raw.trim();
      case SIZE:
        return Integer.toString(getSize(props));
      case BOOLEAN:
        return Boolean.toString(getBoolean(props));
      case HOSTS:
        HostSpec.parseList(name, raw);
        return raw.trim();
      case IDENTIFIER:
        return checkIdentifier(raw.trim());
      case CHOICE:
        return checkChoice(raw.trim());
      default:
        return raw;
    }
  }

  /** DURATION keys: the parsed value, or null when neither set nor defaulted (lockTimeout). */
  Duration getDuration(Properties props) throws SQLException {
    requireKind(Kind.DURATION);
    String raw = valueOrDefault(props);
    if (raw == null) {
      return null;
    }
    Duration d = Durations.parse(name, raw);
    if (d.isZero() && this != LOCK_TIMEOUT) {
      throw invalidValue(name, raw, "must be greater than zero; expected " + expected());
    }
    if (isServerTimeout() && d.toMillis() > SERVER_TIMEOUT_MAX_MS) {
      throw invalidValue(name, raw, "PostgreSQL accepts at most " + SERVER_TIMEOUT_MAX_MS
          + "ms; expected " + expected());
    }
    Duration floor = floor();
    if (floor != null && d.compareTo(floor) < 0) {
      throw invalidValue(name, raw, "must be at least " + Durations.format(floor)
          + "; expected " + expected());
    }
    return d;
  }

  /** SIZE keys: a whole number >= 1. */
  int getSize(Properties props) throws SQLException {
    requireKind(Kind.SIZE);
    String raw = valueOrDefault(props);
    String v = raw.trim();
    int size;
    try {
      size = Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw invalidValue(name, raw, "expected " + expected());
    }
    if (size < 1) {
      throw invalidValue(name, raw, "must be at least 1; expected " + expected());
    }
    return size;
  }

  /** BOOLEAN keys: true or false, any case; nothing else (no yes/1, they hide typos). */
  boolean getBoolean(Properties props) throws SQLException {
    requireKind(Kind.BOOLEAN);
    String raw = valueOrDefault(props);
    String v = raw.trim();
    if ("true".equalsIgnoreCase(v)) {
      return true;
    }
    if ("false".equalsIgnoreCase(v)) {
      return false;
    }
    throw invalidValue(name, raw, "expected " + expected());
  }

  /** HOSTS keys: the parsed list; empty when unset. */
  List<HostSpec> getHosts(Properties props) throws SQLException {
    requireKind(Kind.HOSTS);
    String raw = valueOrDefault(props);
    return raw == null ? List.of() : HostSpec.parseList(name, raw);
  }

  /**
   * The typed value: Duration, Integer, Boolean, List&lt;HostSpec&gt; or String (null when
   * unset without default). Lets {@link OmniumConfig} validate every key in one loop.
   */
  Object getValue(Properties props) throws SQLException {
    switch (kind) {
      case DURATION:
        return getDuration(props);
      case SIZE:
        return getSize(props);
      case BOOLEAN:
        return getBoolean(props);
      case HOSTS:
        return getHosts(props);
      default:
        return get(props);
    }
  }

  /** Renders a value returned by {@link #getValue} the way a user could type it back. */
  static String render(Object value) {
    if (value instanceof Duration) {
      return Durations.format((Duration) value);
    }
    if (value instanceof List) {
      StringBuilder sb = new StringBuilder();
      for (Object h : (List<?>) value) {
        if (sb.length() > 0) {
          sb.append(',');
        }
        sb.append(h);
      }
      return sb.toString();
    }
    return value == null ? null : value.toString();
  }

  /**
   * The one way a bad value is reported: SQLState 08001 (the connection cannot be made),
   * naming the key; the value is echoed unless the key is secret.
   */
  static SQLException invalidValue(String key, String value, String detail) {
    String shown = Secrets.isSecretKey(key) ? "***" : value;
    return new SQLNonTransientConnectionException(
        "Invalid value for " + key + ": \"" + shown + "\" (" + detail + ")", "08001");
  }

  private String valueOrDefault(Properties props) {
    String raw = getRaw(props);
    return raw != null ? raw : defaultValue;
  }

  private boolean isServerTimeout() {
    return this == STATEMENT_TIMEOUT || this == REPLICA_STATEMENT_TIMEOUT
        || this == IDLE_IN_TRANSACTION_TIMEOUT || this == LOCK_TIMEOUT;
  }

  private Duration floor() {
    switch (this) {
      // Both become HikariCP connectionTimeout values (pool and replica pools).
      case POOL_TIMEOUT:
      case REPLICA_ACQUIRE_TIMEOUT:
        return HIKARI_TIMEOUT_FLOOR;
      case MAX_LIFETIME:
        return HIKARI_LIFETIME_FLOOR;
      case POOL_IDLE_TIMEOUT:
        return HIKARI_IDLE_FLOOR;
      default:
        return null;
    }
  }

  private String checkIdentifier(String v) throws SQLException {
    if (!IDENTIFIER.matcher(v).matches()) {
      throw invalidValue(name, v, "expected " + expected());
    }
    return v;
  }

  private String checkChoice(String v) throws SQLException {
    for (String c : choices) {
      if (c.equalsIgnoreCase(v)) {
        return c;
      }
    }
    throw invalidValue(name, v, "expected " + expected());
  }

  private void requireKind(Kind expectedKind) {
    if (kind != expectedKind) {
      throw new IllegalStateException(name + " is a " + kind + " property, not " + expectedKind);
    }
  }
}
