package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one connector's sessions get their route's settings: in the startup packet's
 * {@code options} (no round trip), or, once a server turns out to sit behind a pooler, with each
 * transaction ({@link TransactionSettings}), or once per session where the pooler is proven to
 * pin a server session to each client and reset it when the client leaves ({@link
 * SessionPinning}). Nothing to configure: PgBouncer's default configuration refuses the
 * {@code options} startup parameter ({@code 08P01 unsupported startup parameter}), which turns
 * the connector away from the startup packet and connects again without them; a pooler told to
 * ignore it ({@code ignore_startup_parameters = options}) accepts and drops them, which the first
 * session's check finds (one query, once per connector). With {@code pooler=transaction} the
 * connector never sends them (a pooler that passes them on from whichever client opened a server
 * session, which no check can see), nor sets them for a session.
 *
 * <p>The way is decided once, before a session of the connector serves, and a session keeps the
 * way it was opened with. One change only: where sessions are pinned, each later login checks
 * its own session again, and one that finds it shared (a bouncer restarted with transaction
 * pooling) sets nothing on it and turns the connector to settings with each transaction.
 */
final class StartupSettings {
  private static final Logger log = LoggerFactory.getLogger(StartupSettings.class);
  private static final String OPTIONS = "options";

  private static final int UNKNOWN = 0;
  private static final int STARTUP_PACKET = 1;
  private static final int PER_TRANSACTION = 2;
  private static final int PER_SESSION = 3;
  /** The longest the proof of session pinning may take, once per connector. */
  private static final long PINNING_PROOF_MILLIS = 5_000;

  private final Map<String, String> expected;
  private final String userOptions;
  /** Whether its sessions may get the settings once each where pinning is proven. */
  private final boolean mayPin;
  private volatile int state;
  private volatile TransactionSettings perTransaction;
  /** What each session sets when it opens, once pinning is proven; else null. */
  private volatile PinnedSettings pinned;

  /**
   * @param expected what the startup packet's {@code options} set (the route's own settings)
   * @param userOptions the {@code options} the user gave, which join them per transaction
   * @param perTransactionOnly {@code pooler=transaction}: never in the startup packet
   */
  StartupSettings(Map<String, String> expected, String userOptions, boolean perTransactionOnly) {
    this(expected, userOptions, perTransactionOnly, false);
  }

  /**
   * @param mayPin whether sessions get the settings once each where the pooler is proven to pin
   *     sessions (the application's routes; omnium's own background sessions keep them per
   *     transaction)
   */
  StartupSettings(Map<String, String> expected, String userOptions,
      boolean perTransactionOnly, boolean mayPin) {
    this.expected = new LinkedHashMap<>(expected);
    this.userOptions = userOptions;
    this.mayPin = mayPin && !perTransactionOnly;
    if (perTransactionOnly) state = PER_TRANSACTION; // built at the first connect
  }

  /**
   * What every connector of one address, route and settings shares: whether a pooler sits in
   * front is found out once per process, and what a login found serves every later connector of
   * the same address (a driver-mode connection's own primary login, its router's, a new router's).
   * A pooler's mode may differ by user, so the user is part of the key.
   */
  private static final ConcurrentHashMap<String, StartupSettings> SHARED =
      new ConcurrentHashMap<>();

  /** The settings of {@code route} as {@code config} gives them, for sessions of {@code url}. */
  static StartupSettings of(OmniumConfig config, Route route, String url) {
    Map<String, String> expected = config.sessionSettings(route);
    String user = config.physicalProperties(route).getProperty("user");
    boolean mayPin = route == Route.PRIMARY || route == Route.FALLBACK || route == Route.REPLICA;
    String key = url + '\n' + user + '\n' + route + '\n' + expected + '\n'
        + config.userOptions() + '\n' + config.poolerTransaction();
    return SHARED.computeIfAbsent(key, k -> new StartupSettings(expected, config.userOptions(),
        config.poolerTransaction(), mayPin));
  }

  /** What each transaction sets once sessions get them that way; null while the packet does. */
  TransactionSettings perTransaction() {
    return perTransaction;
  }

  /**
   * What each session sets when it opens, and again after a reset ({@link SessionReset}), where
   * the pooler is proven to pin sessions; null otherwise.
   */
  PinnedSettings pinned() {
    return pinned;
  }

  /** Whether the next connect sends the options (false once a pooler sits in front). */
  boolean sendsOptions() {
    return state == UNKNOWN || state == STARTUP_PACKET;
  }

  /**
   * The properties of the next connect: {@code p}, or without what a pooler refuses.
   *
   * @throws SQLException 08001 when the user's options hold more than settings
   */
  Properties forConnect(Properties p, String where) throws SQLException {
    if (sendsOptions()) return p;
    if (state == PER_TRANSACTION && perTransaction == null) switchToPerTransaction(where, null);
    return withoutOptions(p);
  }

  /** {@code p} without the {@code options} property. */
  static Properties withoutOptions(Properties p) {
    Properties q = new Properties();
    for (String key : p.stringPropertyNames()) q.setProperty(key, p.getProperty(key));
    q.remove(OPTIONS);
    return q;
  }

  /**
   * A connect failed: true when a pooler refused the options (the caller connects again, with
   * {@link #forConnect}).
   *
   * @param sentOptions whether the connect that failed sent the options
   * @param opener client connections of the pooler without the options, for the proof of
   *     pinning ({@link SessionPinning})
   * @throws SQLException the refusal, saying what to do, when it refused more than the options
   */
  boolean refused(SQLException e, String where, boolean sentOptions,
      SessionPinning.Opener opener) throws SQLException {
    if (!"08P01".equals(e.getSQLState()) || e.getMessage() == null
        || !e.getMessage().contains("unsupported startup parameter")) {
      return false;
    }
    if (!sentOptions) {
      // refused without our options: a pgjdbc property the pooler does not track
      throw new SQLException("omnium: " + where + " refuses a startup parameter even without"
          + " the options omnium sends (" + e.getMessage() + "): it comes from a pgjdbc property"
          + " of the URL (currentSchema sends search_path, for one); remove it, or list it in the"
          + " pooler's ignore_startup_parameters and set it with ALTER ROLE ... SET",
          e.getSQLState(), e);
    }
    decide(where, "refuses the startup parameter options (" + e.getMessage()
        + "), as PgBouncer does", opener);
    return true;
  }

  /**
   * After a connect: until one session proved the options arrive, asks the server whether they
   * did (one query), and when they did not, decides how sessions get them from now on, this one
   * included; where they are set once per session, sets them on {@code c} (one round trip).
   *
   * @param sentOptions whether the connect sent the options
   */
  void settle(Connection c, String where, boolean sentOptions, SessionPinning.Opener opener)
      throws SQLException {
    if (sentOptions && state == UNKNOWN) check(c, where, opener);
    PinnedSettings p = pinned;
    if (p == null) return;
    if (!sentOptions) {
      // a later session: still pinned? (a bouncer restarted with transaction pooling is not)
      String disproof;
      try {
        disproof = SessionPinning.disproofWith(c, opener, PINNING_PROOF_MILLIS);
      } catch (SQLException e) {
        // neither way: this session is not used (nothing set on it), the next login checks again
        throw new SQLException("omnium: " + where + ": could not check that the pooler still"
            + " gives this session a server session of its own (" + e.getMessage() + "); with"
            + " session pooling the check needs one more server session in the pool for a moment",
            "08001", e);
      }
      if (disproof != null) {
        unpin(where, disproof);
        return;
      }
    }
    try (Statement st = c.createStatement()) {
      st.execute(p.set);
    }
  }

  private void check(Connection c, String where, SessionPinning.Opener opener)
      throws SQLException {
    StringBuilder sql = new StringBuilder("SELECT name, setting FROM pg_settings WHERE name IN (");
    int i = 0;
    for (String name : expected.keySet()) sql.append(i++ == 0 ? "?" : ", ?");
    Map<String, String> found = new LinkedHashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql.append(')').toString())) {
      i = 1;
      for (String name : expected.keySet()) ps.setString(i++, name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) found.put(rs.getString(1).toLowerCase(Locale.ROOT), rs.getString(2));
      }
    }
    for (Map.Entry<String, String> e : expected.entrySet()) {
      String got = found.get(e.getKey().toLowerCase(Locale.ROOT));
      if (!e.getValue().equals(got)) {
        decide(where, "accepts the startup parameter options but " + e.getKey() + " is " + got
            + ", not " + e.getValue() + " (a pooler that ignores it, such as PgBouncer with"
            + " ignore_startup_parameters = options)", opener);
        return;
      }
    }
    synchronized (this) {
      if (state == UNKNOWN) state = STARTUP_PACKET;
    }
  }

  /**
   * A pooler sits in front: once per connector, before any of its sessions serves, the settings
   * go once per session where the pooler is proven to pin sessions, else with each transaction.
   */
  private synchronized void decide(String where, String why, SessionPinning.Opener opener)
      throws SQLException {
    if (pinned != null || perTransaction != null) return;
    Map<String, String> all = allSettings(where, why);
    if (!mayPin) {
      switchToPerTransaction(where, why);
      return;
    }
    String disproof = SessionPinning.disproof(opener, PINNING_PROOF_MILLIS);
    if (disproof != null) {
      switchToPerTransaction(where, why + "; not proven to pin server sessions (" + disproof
          + ")");
      return;
    }
    pin(all);
    log.info("omnium: {} {}: it pins a server session to each client and resets it when the"
        + " client leaves (session pooling), so each session sets its settings ({}) once when it"
        + " opens", where, why, String.join(", ", all.keySet()));
  }

  /** From now on each session sets {@code all} once when it opens. */
  private synchronized void pin(Map<String, String> all) {
    pinned = new PinnedSettings(all);
    state = PER_SESSION;
  }

  /**
   * A session opened after the proof found the pooler no longer pins sessions: sessions opened
   * from now on get the settings with each transaction; those already open keep theirs until
   * they are retired (see docs/topologies.md).
   */
  private synchronized void unpin(String where, String disproof) throws SQLException {
    if (pinned == null) return;
    perTransaction = TransactionSettings.of(allSettings(where, null));
    pinned = null;
    state = PER_TRANSACTION;
    log.error("omnium: {} no longer pins server sessions ({}): sessions opened from now on set"
        + " their settings with each transaction; those opened before set them for their"
        + " session, which the pooler now shares: restart this process, or set"
        + " pooler=transaction", where, disproof);
  }

  /** From now on per transaction; {@code why} is logged once (null: pooler=transaction). */
  private synchronized void switchToPerTransaction(String where, String why)
      throws SQLException {
    if (perTransaction != null) return;
    Map<String, String> all = allSettings(where, why);
    perTransaction = TransactionSettings.of(all);
    state = PER_TRANSACTION;
    if (why != null) {
      log.info("omnium: {} {}: its session settings ({}) go with each transaction from now on,"
          + " never set on the session", where, why, String.join(", ", all.keySet()));
    }
  }

  /**
   * The user's {@code options} and the route's own settings, which a pooler makes omnium set
   * itself.
   *
   * @throws SQLException 08001 when the user's options hold more than settings
   */
  private Map<String, String> allSettings(String where, String why) throws SQLException {
    Map<String, String> all = new LinkedHashMap<>();
    try {
      all.putAll(parseOptions(userOptions));
    } catch (IllegalArgumentException e) {
      throw new SQLException("omnium: " + where + (why == null ? " is behind a pooler"
          : " " + why) + ", so omnium sets the session settings itself, and " + e.getMessage()
          + ": set it with ALTER ROLE ... SET instead", "08001", e);
    }
    all.putAll(expected);
    return all;
  }

  /**
   * The {@code -c name=value} (or {@code --name=value}) settings of a libpq {@code options}
   * string, as the server reads it (a backslash escapes the next character).
   *
   * @throws IllegalArgumentException for anything else, which no transaction can set
   */
  static Map<String, String> parseOptions(String options) {
    Map<String, String> out = new LinkedHashMap<>();
    if (options == null) return out;
    List<String> words = new ArrayList<>();
    StringBuilder w = new StringBuilder();
    boolean inWord = false;
    for (int i = 0; i < options.length(); i++) {
      char ch = options.charAt(i);
      if (ch == '\\' && i + 1 < options.length()) {
        w.append(options.charAt(++i));
        inWord = true;
      } else if (Character.isWhitespace(ch)) {
        if (inWord) words.add(w.toString());
        w.setLength(0);
        inWord = false;
      } else {
        w.append(ch);
        inWord = true;
      }
    }
    if (inWord) words.add(w.toString());
    for (int i = 0; i < words.size(); i++) {
      String word = words.get(i);
      String setting;
      if (word.equals("-c") && i + 1 < words.size()) {
        setting = words.get(++i);
      } else if (word.startsWith("-c")) {
        setting = word.substring(2);
      } else if (word.startsWith("--")) {
        setting = word.substring(2);
      } else {
        throw new IllegalArgumentException("options: " + word + " is not a -c name=value"
            + " setting, which is all a transaction can set behind a pooler");
      }
      int eq = setting.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("options: " + setting + " is not name=value");
      }
      out.put(setting.substring(0, eq).replace('-', '_'), setting.substring(eq + 1));
    }
    return out;
  }
}
