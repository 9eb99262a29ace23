package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The session settings a logical connection set with SQL ({@code SET}, {@code RESET},
 * {@code set_config(…, false)}, {@code SET ROLE}, {@code SET SESSION AUTHORIZATION}), which
 * follow it as they follow a pgjdbc connection: recorded when they take effect (at once outside
 * a transaction, at its commit inside one), replayed on every session the connection binds
 * ({@link #replayOn}: the one place where the user's settings reach a session at bind), and undone
 * before a pooled session is lent again ({@link SessionReset}). One item per setting, the last
 * statement that set it, in the order they were set; none (the usual case) costs nothing.
 *
 * <p>Read routes keep their own protections whatever the user set: after the replay they stay
 * read-only, and their statement and idle-in-transaction timeouts are at most the route's own (as
 * a network timeout set through JDBC never lengthens a route's bound).
 */
final class SqlSettings {
  private static final List<SqlSetting> NONE = List.of();

  /** The timeouts a read route keeps at most its own of, whatever the user sets. */
  static final List<String> CAPPED =
      List.of("statement_timeout", "idle_in_transaction_session_timeout");
  /**
   * Each timeout back to at most the route's own, which the startup packet gave ({@code
   * reset_val}): a user's longer or zero ("none") value never removes it. A session that set its
   * settings itself caps them at its own values instead ({@link PinnedSettings#timeoutCaps}).
   */
  private static final String ROUTE_TIMEOUTS = timeoutCaps("pg_settings s",
      "s.reset_val::bigint") + " WHERE s.name IN ('statement_timeout',"
      + " 'idle_in_transaction_session_timeout')";
  private static final String READ_ONLY = "SET default_transaction_read_only = on";

  /** The settings in force, SET changes only, in the order they were made. */
  private List<SqlSetting> items = NONE;
  /** Changes made in the current transaction: recorded when it commits, dropped at rollback. */
  private List<SqlSetting> pending;
  /** A savepoint was rolled back after a pending change: which ones hold is unknown. */
  private boolean pendingUncertain;
  /** The replay as one multi-statement string, per route kind; rebuilt after a change. */
  private String primaryReplay;
  private String readReplay;
  /** A default isolation of serializable was set: a standby refuses such transactions. */
  private boolean serializable;
  /**
   * Behind a pooler ({@link TransactionSettings}): each transaction's prefix with these settings,
   * by the route's own prefix (identity), so that a statement prepared after it is found again.
   */
  private final String[] carriedFor = new String[4];
  private final String[] carried = new String[4];
  private int carriedNext;
  /** How many statements the settings add to a prefix, per route kind; -1: not counted yet. */
  private int primaryCount = -1;
  private int readCount = -1;

  boolean isEmpty() {
    return items.isEmpty();
  }

  boolean hasPending() {
    return pending != null;
  }

  /** Read-only work must run on the primary: the default isolation set is serializable. */
  boolean serializable() {
    return serializable;
  }

  /** Forgets everything: the state is lent to another connection. */
  void clear() {
    items = NONE;
    pending = null;
    pendingUncertain = false;
    primaryReplay = readReplay = null;
    serializable = false;
    forgetCarried();
  }

  private void forgetCarried() {
    Arrays.fill(carriedFor, null);
    Arrays.fill(carried, null);
    primaryCount = readCount = -1;
  }

  // ---------------------------------------------------------------- behind a pooler

  /**
   * The prefix of a transaction behind a pooler: {@code routeBlock} (the route's own {@code SET
   * LOCAL}s) with these settings for the transaction only, never for the server session the
   * pooler shares. On the primary the user's come after the route's, as a {@code SET} after the
   * startup packet would; on a read route before, so the route's timeouts hold, and a
   * read-only setting is left out (the route's transactions are read-only whatever was set).
   *
   * @throws SQLException 0A000 when a setting cannot be made transaction-local (set by a prepared
   *     statement with bound values)
   */
  String carriedWith(String routeBlock, boolean read) throws SQLException {
    for (int i = 0; i < carriedFor.length; i++) {
      if (carriedFor[i] == routeBlock) return carried[i];
    }
    StringBuilder mine = new StringBuilder();
    int n = 0;
    for (SqlSetting it : items) {
      if (read && it.key().equals("default_transaction_read_only")) continue;
      String local = it.localSql();
      if (local == null) {
        throw new SQLException("omnium: behind a pooler the session setting " + it.key()
            + " is carried by each transaction, and the statement that set it cannot be"
            + " (a prepared statement with bound values): set it with SET, or with"
            + " set_config(…, true) in each transaction", "0A000");
      }
      mine.append(local).append("; ");
      n++;
    }
    String text = read ? mine + routeBlock : routeBlock + mine;
    int slot = carriedNext;
    carriedNext = (slot + 1) % carriedFor.length;
    carriedFor[slot] = routeBlock;
    carried[slot] = text;
    if (read) {
      readCount = n;
    } else {
      primaryCount = n;
    }
    return text;
  }

  /** How many statements {@link #carriedWith} added, after a call for the same route kind. */
  int carriedCount(boolean read) {
    return read ? readCount : primaryCount;
  }

  /** Changes that took effect now (outside a transaction, or at its commit). */
  void record(List<SqlSetting> changes) {
    List<SqlSetting> list = new ArrayList<>(items);
    for (SqlSetting c : changes) apply(list, c);
    changed(list);
  }

  private void changed(List<SqlSetting> list) {
    items = list.isEmpty() ? NONE : list;
    primaryReplay = readReplay = null;
    forgetCarried();
    serializable = false;
    for (SqlSetting it : items) {
      serializable |= it.key().equals("default_transaction_isolation")
          && it.sql().toLowerCase(Locale.ROOT).contains("serializable");
    }
  }

  private static void apply(List<SqlSetting> list, SqlSetting c) {
    switch (c.action()) {
      case SqlSetting.RESET_ALL:
        list.removeIf(it -> !it.key().equals(SqlSetting.ROLE)
            && !it.key().equals(SqlSetting.SESSION_AUTHORIZATION));
        break;
      case SqlSetting.DISCARD_ALL:
        list.clear();
        break;
      default:
        list.removeIf(it -> it.key().equals(c.key()));
        // a session authorization resets the role as well
        if (c.key().equals(SqlSetting.SESSION_AUTHORIZATION)) {
          list.removeIf(it -> it.key().equals(SqlSetting.ROLE));
        }
        if (c.action() == SqlSetting.SET) list.add(c);
    }
  }

  /** Whether a change touches {@code key}: set or reset it, or reset every setting. */
  static boolean touches(List<SqlSetting> changes, String key) {
    for (SqlSetting c : changes) {
      if (c.key() == null || c.key().equals(key)) return true;
    }
    return false;
  }

  /** A JDBC setter now owns {@code key} (search_path for setSchema): the SQL item goes. */
  void supersede(String key) {
    for (SqlSetting it : items) {
      if (it.key().equals(key)) {
        List<SqlSetting> list = new ArrayList<>(items);
        list.removeIf(x -> x.key().equals(key));
        changed(list);
        return;
      }
    }
  }

  /** Changes made inside a transaction: they hold once it commits. */
  void pend(List<SqlSetting> changes) {
    if (pending == null) pending = new ArrayList<>(changes.size());
    pending.addAll(changes);
  }

  /** A savepoint was rolled back, or raw SQL ended the transaction: pending changes are unsure. */
  void rewound() {
    if (pending != null) pendingUncertain = true;
  }

  /**
   * The transaction ended: its changes are recorded when it committed and which of them hold is
   * known. Returns the changes recorded, for the other sessions bound, or null.
   */
  List<SqlSetting> transactionEnded(boolean committed) {
    List<SqlSetting> p = pending;
    boolean unsure = pendingUncertain;
    pending = null;
    pendingUncertain = false;
    if (p == null || !committed || unsure) return null;
    record(p);
    return p;
  }

  /**
   * Replays every setting on a session just bound, in one round trip (one more per setting set
   * by a prepared statement with bound values), the session in autocommit. On a read route the
   * route's protections hold after the user's settings.
   *
   * @param pinned the settings the session set itself when it opened (a pooler that pins
   *     sessions), or null
   */
  void replayOn(Connection session, Route route, PinnedSettings pinned) throws SQLException {
    boolean read = route == Route.REPLICA || route == Route.FALLBACK;
    // a pinned session's text is not kept (rare): a kept one is always the startup packet's
    String text = pinned != null ? replayText(items, read, pinned)
        : read ? readReplay : primaryReplay;
    if (text == null) {
      text = replayText(items, read, null);
      if (read) {
        readReplay = text;
      } else {
        primaryReplay = text;
      }
    }
    run(session, text, items, read, pinned);
  }

  /** Applies changes that took effect on another session of the same logical connection. */
  static void replayChanges(Connection session, List<SqlSetting> changes, Route route,
      PinnedSettings pinned) throws SQLException {
    boolean read = route == Route.REPLICA || route == Route.FALLBACK;
    run(session, replayText(changes, read, pinned), changes, read, pinned);
  }

  /**
   * Runs the replay: {@code text} holds the statements without bound values and, when no
   * change has any, the protections; otherwise those run after the bound ones.
   */
  private static void run(Connection session, String text, List<SqlSetting> changes,
                          boolean read, PinnedSettings pinned) throws SQLException {
    Object quiet = Tracing.quietBegin(); // omnium's own statements: no span (see Tracing)
    try {
      execute(session, text);
      boolean bound = false;
      for (SqlSetting c : changes) {
        if (c.params() == null) continue;
        bound = true;
        try (PreparedStatement ps = session.prepareStatement(c.sql())) {
          c.params().applyTo(ps);
          ps.execute();
        }
      }
      if (bound && pinned != null) execute(session, pinned.restoring(changes));
      if (bound && read) execute(session, protections(changes, pinned));
    } finally {
      Tracing.quietEnd(quiet);
    }
  }

  /**
   * After the user's {@code changes} ran on a session that set its settings itself ({@code
   * pinned}): sets again those a RESET took back to the server's defaults, as the startup
   * packet's values are elsewhere (in the user's transaction, when one is open).
   */
  static void restore(Connection session, List<SqlSetting> changes, PinnedSettings pinned)
      throws SQLException {
    String text = pinned.restoring(changes);
    if (text.isEmpty()) return;
    Object quiet = Tracing.quietBegin();
    try {
      execute(session, text);
    } finally {
      Tracing.quietEnd(quiet);
    }
  }

  private static void execute(Connection session, String text) throws SQLException {
    if (text.isEmpty()) return;
    try (Statement st = session.createStatement()) {
      st.execute(text);
    }
  }

  /**
   * The changes without bound values (then what a pinned session's resets undid, and a read
   * route's protections) as one string.
   */
  private static String replayText(List<SqlSetting> changes, boolean read,
      PinnedSettings pinned) {
    StringBuilder b = new StringBuilder();
    boolean bound = false;
    for (SqlSetting c : changes) {
      if (c.params() != null) {
        bound = true;
      } else {
        append(b, c.action() == SqlSetting.SET ? c.sql() : c.resetSql());
      }
    }
    if (pinned != null && !bound) append(b, pinned.restoring(changes));
    if (read && !bound) append(b, protections(changes, pinned));
    return b.toString();
  }

  /** What a read route restores after {@code changes}: read-only, its own timeouts at most. */
  private static String protections(List<SqlSetting> changes, PinnedSettings pinned) {
    StringBuilder b = new StringBuilder();
    boolean readOnly = false;
    boolean timeouts = false;
    for (SqlSetting c : changes) {
      if (c.action() != SqlSetting.SET) continue;
      readOnly |= c.key().equals("default_transaction_read_only");
      timeouts |= c.key().equals("statement_timeout")
          || c.key().equals("idle_in_transaction_session_timeout");
    }
    if (readOnly) append(b, READ_ONLY);
    if (timeouts) append(b, pinned != null ? pinned.timeoutCaps : ROUTE_TIMEOUTS);
    return b.toString();
  }

  /**
   * The statement that sets each capped timeout {@code s.name} of {@code from} to the route's
   * {@code cap} where the session's is unlimited or longer (a cap of 0 caps nothing).
   */
  static String timeoutCaps(String from, String cap) {
    return "SELECT set_config(s.name, CASE WHEN " + cap + " > 0 AND (s.setting::bigint = 0 OR"
        + " s.setting::bigint > " + cap + ") THEN " + cap + "::text ELSE s.setting END, false)"
        + " FROM " + from;
  }

  private static void append(StringBuilder b, String sql) {
    if (sql.isEmpty()) return;
    if (b.length() > 0) b.append("; ");
    b.append(sql);
  }
}
