package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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
 * transaction ({@link TransactionSettings}). Nothing to configure: PgBouncer's default
 * configuration refuses the {@code options} startup parameter ({@code 08P01 unsupported startup
 * parameter}), which turns the connector to per-transaction settings and connects again without
 * them; a pooler told to ignore it ({@code ignore_startup_parameters = options}) accepts and drops
 * them, which the first session's check finds (one query, once per connector). With
 * {@code pooler=transaction} the connector never sends them (a pooler that passes them on from
 * whichever client opened a server session, which no check can see).
 */
final class StartupSettings {
  private static final Logger log = LoggerFactory.getLogger(StartupSettings.class);
  private static final String OPTIONS = "options";

  private static final int UNKNOWN = 0;
  private static final int STARTUP_PACKET = 1;
  private static final int PER_TRANSACTION = 2;

  private final Map<String, String> expected;
  private final String userOptions;
  private volatile int state;
  private volatile TransactionSettings perTransaction;

  /**
   * @param expected what the startup packet's {@code options} set (the route's own settings)
   * @param userOptions the {@code options} the user gave, which join them per transaction
   * @param perTransactionOnly {@code pooler=transaction}: never in the startup packet
   */
  StartupSettings(Map<String, String> expected, String userOptions, boolean perTransactionOnly) {
    this.expected = new LinkedHashMap<>(expected);
    this.userOptions = userOptions;
    if (perTransactionOnly) state = PER_TRANSACTION; // built at the first connect
  }

  /**
   * What every connector of one address, route and settings shares: whether a pooler sits in
   * front is found out once per process, and what a login found serves every later connector of
   * the same address (a driver-mode connection's own primary login, its router's, a new router's).
   */
  private static final ConcurrentHashMap<String, StartupSettings> SHARED =
      new ConcurrentHashMap<>();

  /** The settings of {@code route} as {@code config} gives them, for sessions of {@code url}. */
  static StartupSettings of(OmniumConfig config, Route route, String url) {
    Map<String, String> expected = config.sessionSettings(route);
    String key = url + '\n' + route + '\n' + expected + '\n' + config.userOptions() + '\n'
        + config.poolerTransaction();
    return SHARED.computeIfAbsent(key, k -> new StartupSettings(expected, config.userOptions(),
        config.poolerTransaction()));
  }

  /** What each transaction sets once sessions get them that way; null while the packet does. */
  TransactionSettings perTransaction() {
    return perTransaction;
  }

  /**
   * The properties of the next connect: {@code p}, or without what a pooler refuses.
   *
   * @throws SQLException 08001 when the user's options hold more than settings
   */
  Properties forConnect(Properties p, String where) throws SQLException {
    if (state != PER_TRANSACTION) return p;
    if (perTransaction == null) switchToPerTransaction(where, null);
    Properties q = new Properties();
    for (String key : p.stringPropertyNames()) q.setProperty(key, p.getProperty(key));
    q.remove(OPTIONS);
    return q;
  }

  /**
   * A connect failed: true when a pooler refused the options (the caller connects again, with
   * {@link #forConnect}).
   *
   * @throws SQLException the refusal, saying what to do, when it refused more than the options
   */
  boolean refused(SQLException e, String where) throws SQLException {
    if (!"08P01".equals(e.getSQLState()) || e.getMessage() == null
        || !e.getMessage().contains("unsupported startup parameter")) {
      return false;
    }
    if (state == PER_TRANSACTION) {
      // refused without our options: a pgjdbc property the pooler does not track
      throw new SQLException("omnium: " + where + " refuses a startup parameter even without"
          + " the options omnium sends (" + e.getMessage() + "): it comes from a pgjdbc property"
          + " of the URL (currentSchema sends search_path, for one); remove it, or list it in the"
          + " pooler's ignore_startup_parameters and set it with ALTER ROLE ... SET",
          e.getSQLState(), e);
    }
    switchToPerTransaction(where, "refuses the startup parameter options (" + e.getMessage()
        + "), as PgBouncer does");
    return true;
  }

  /**
   * After a connect that sent the options, until one session proved they arrive: asks the
   * server whether they did (one query). When they did not, later sessions get them per
   * transaction, and so does this one.
   */
  void check(Connection c, String where) throws SQLException {
    if (state != UNKNOWN) return;
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
        switchToPerTransaction(where, "accepts the startup parameter options but " + e.getKey()
            + " is " + got + ", not " + e.getValue() + " (a pooler that ignores it, such as"
            + " PgBouncer with ignore_startup_parameters = options)");
        return;
      }
    }
    state = STARTUP_PACKET;
  }

  /** Whether a session opened now must be checked with {@link #check}. */
  boolean unchecked() {
    return state == UNKNOWN;
  }

  /** From now on per transaction; {@code why} is logged once (null: pooler=transaction). */
  private synchronized void switchToPerTransaction(String where, String why)
      throws SQLException {
    if (perTransaction != null) return;
    Map<String, String> all = new LinkedHashMap<>();
    try {
      all.putAll(parseOptions(userOptions));
    } catch (IllegalArgumentException e) {
      throw new SQLException("omnium: " + where + (why == null ? " is behind a pooler"
          : " " + why) + ", so session settings go with each transaction, and " + e.getMessage()
          + ": set it with ALTER ROLE ... SET instead", "08001", e);
    }
    all.putAll(expected);
    perTransaction = TransactionSettings.of(all);
    state = PER_TRANSACTION;
    if (why != null) {
      log.info("omnium: {} {}: its session settings ({}) go with each transaction from now on,"
          + " never set on the session", where, why, String.join(", ", all.keySet()));
    }
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
