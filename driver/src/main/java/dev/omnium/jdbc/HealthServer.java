package dev.omnium.jdbc;

import static dev.omnium.jdbc.HealthTable.col;

import dev.omnium.jdbc.HealthTable.Column;
import dev.omnium.jdbc.HealthTable.Kind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.postgresql.PGConnection;
import org.postgresql.jdbc.AutoSave;

/**
 * What {@code check} learned about one server (the primary or one configured replica), read
 * from system views on one short-lived pgjdbc connection. Every section is read on its own, so
 * a view the user may not read (or a slow one) costs that section only.
 */
final class HealthServer {

  /** What reading the heartbeat row gave. */
  enum Beat {
    NOT_READ, OK, NO_TABLE, NO_ROW, BAD_TABLE, PERMISSION_DENIED, BAD_TABLE_NAME, RECOVERY_CONFLICT,
    ERROR
  }

  static final int TOP_TRANSACTIONS = 5;
  static final int TOP_LOCK_WAITS = 10;
  static final int TOP_TABLES = 10;

  private static final String INFO_SQL = "SELECT current_setting('server_version'),"
      + " current_setting('server_version_num')::int, pg_is_in_recovery(),"
      + " current_setting('max_connections')::int,"
      + " CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() END,"
      + " (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
      + " ELSE pg_current_wal_lsn() END)::text,"
      + " (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int";

  private static final String WAL_RECEIVER_SQL = "SELECT status FROM pg_stat_wal_receiver";

  /**
   * Holders of the writer's advisory lock: a bigint key shows as classid (high) / objid (low),
   * objsubid 1.
   */
  private static final String WRITER_LOCK_SQL = "SELECT l.pid, a.application_name,"
      + " host(a.client_addr), a.usename::text,"
      + " extract(epoch FROM now() - a.backend_start)::float8, l.granted"
      + " FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
      + " WHERE l.locktype = 'advisory' AND l.objsubid = 1"
      + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
      + " AND l.classid::bigint = ? AND l.objid::bigint = ?"
      + " ORDER BY l.granted DESC, l.pid";

  private static final String REPLICATION_SQL = "SELECT coalesce(application_name, ''),"
      + " host(client_addr), state, sync_state,"
      + " extract(epoch FROM write_lag)::float8, extract(epoch FROM flush_lag)::float8,"
      + " extract(epoch FROM replay_lag)::float8,"
      + " pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint"
      + " FROM pg_stat_replication ORDER BY application_name, client_addr, pid";

  private static final String CONNECTIONS_SQL = "SELECT coalesce(application_name, ''),"
      + " coalesce(state, 'unknown'), count(*)"
      + " FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
      + " GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2";

  private static final String TRANSACTIONS_SQL = "SELECT pid,"
      + " coalesce(nullif(application_name, ''), '(' || backend_type || ')'), usename::text,"
      + " host(client_addr), coalesce(state, 'unknown'),"
      + " extract(epoch FROM now() - xact_start)::float8,"
      + " extract(epoch FROM now() - state_change)::float8,"
      + " left(query, " + HealthTable.QUERY_SQL_CHARS + ")"
      + " FROM pg_stat_activity WHERE xact_start IS NOT NULL AND pid <> pg_backend_pid()";

  private static final String SLOTS_SQL =
      "SELECT slot_name::text, slot_type, coalesce(database::text, ''),"
      + " active, %s, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint AS retained"
      + " FROM pg_replication_slots ORDER BY retained DESC NULLS LAST, slot_name";

  private static final String TABLES_SQL = "SELECT format('%I.%I', n.nspname, c.relname),"
      + " pg_total_relation_size(c.oid), pg_relation_size(c.oid), pg_indexes_size(c.oid),"
      + " CASE WHEN c.reltuples < 0 THEN NULL ELSE c.reltuples::bigint END"
      + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
      + " WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
      + " AND n.nspname !~ '^pg_toast'"
      // Sizing takes an AccessShareLock: skip tables an ALTER/TRUNCATE/VACUUM FULL holds or awaits,
      // so a migration in progress never makes the report wait for it.
      + " AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.relation = c.oid"
      + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
      + " AND l.mode = 'AccessExclusiveLock')"
      + " ORDER BY 2 DESC, 1 LIMIT " + TOP_TABLES;

  static final Column[] WRITER_LOCK = {
      col("pid", "pid", Kind.INT), col("applicationName", "application_name", Kind.TEXT),
      col("clientAddr", "client", Kind.TEXT), col("user", "user", Kind.TEXT),
      col("connectedSeconds", "connected", Kind.SECONDS), col("granted", "granted", Kind.BOOL)};
  static final Column[] REPLICATION = {
      col("applicationName", "application_name", Kind.TEXT),
      col("clientAddr", "client_addr", Kind.TEXT), col("state", "state", Kind.TEXT),
      col("syncState", "sync", Kind.TEXT), col("writeLagSeconds", "write lag", Kind.SECONDS),
      col("flushLagSeconds", "flush lag", Kind.SECONDS),
      col("replayLagSeconds", "replay lag", Kind.SECONDS),
      col("replayBehindBytes", "replay behind", Kind.BYTES)};
  static final Column[] CONNECTIONS = {
      col("applicationName", "application_name", Kind.TEXT), col("state", "state", Kind.TEXT),
      col("count", "count", Kind.INT)};
  static final Column[] TRANSACTIONS = {
      col("pid", "pid", Kind.INT), col("applicationName", "application_name", Kind.TEXT),
      col("user", "user", Kind.TEXT), col("clientAddr", "client", Kind.TEXT),
      col("state", "state", Kind.TEXT), col("transactionSeconds", "xact age", Kind.SECONDS),
      col("stateSeconds", "in state", Kind.SECONDS), col("query", "query", Kind.QUERY)};
  static final Column[] LOCK_WAITS = {
      col("pid", "pid", Kind.INT), col("applicationName", "application_name", Kind.TEXT),
      col("lockType", "lock", Kind.TEXT), col("mode", "mode", Kind.TEXT),
      col("relation", "relation", Kind.TEXT), col("blockedBy", "blocked by", Kind.PIDS),
      col("waitingSeconds", "waiting", Kind.SECONDS), col("query", "query", Kind.QUERY)};
  static final Column[] SLOTS = {
      col("slotName", "slot", Kind.TEXT), col("slotType", "type", Kind.TEXT),
      col("database", "database", Kind.TEXT), col("active", "active", Kind.BOOL),
      col("walStatus", "wal_status", Kind.TEXT), col("retainedWalBytes", "retained WAL",
          Kind.BYTES)};
  static final Column[] TABLES = {
      col("table", "table", Kind.TEXT), col("totalBytes", "total", Kind.BYTES),
      col("tableBytes", "heap", Kind.BYTES), col("indexBytes", "indexes", Kind.BYTES),
      col("estimatedRows", "rows (est.)", Kind.INT)};

  /** Unique in the report; {@code replica1.2} for the second server behind one address. */
  String label;
  final boolean configuredPrimary;
  /** The configured address, or {@code address/server} behind an address reaching several. */
  String endpoint;
  /** The configured address it was reached through. */
  final String address;
  /** Which server a replica address's session reached; null for the primary or when unread. */
  ServerKey server;
  /** On an address's first server: the distinct servers it reached, and the connects tried. */
  int serversBehind;
  int connectsTried;
  private final String url;
  private final Properties props;

  Connection connection;
  boolean reachable;
  String error;

  String version;
  int versionNum;
  Boolean inRecovery;
  Boolean replayPaused;
  Integer maxConnections;
  Integer clientConnections;
  /** pg_current_wal_lsn() on a primary, pg_last_wal_replay_lsn() on a standby. */
  String walLsn;
  /** pg_stat_wal_receiver.status, null when no WAL receiver runs (replicas only). */
  String walReceiver;
  /** System identifier and timeline (see {@link ServerIdentity}); null when not read. */
  ServerIdentity identity;

  Beat beat = Beat.NOT_READ;
  /**
   * Primary: age of beat_at on its own clock; replica: effective lag, the clock-free bound of
   * {@link HealthCheck#measureLag} (null when it could not be measured). Seconds, never negative.
   */
  Double beatSeconds;
  String beatError;
  /** Replica: still short of the primary's position when check stopped waiting: lag is over it. */
  boolean lagOver;
  /** Replica: why its lag could not be measured. */
  String lagError;
  /** This server's clock minus the check's, NTP-style (reported, never used for lag). */
  final ClockOffset clockOffset = new ClockOffset();

  HealthTable writerLock;
  HealthTable replication;
  HealthTable connections;
  HealthTable oldestTransactions;
  HealthTable idleInTransaction;
  HealthTable lockWaits;
  HealthTable slots;
  /** What omnium-ops recorded (the primary only); null when not read. */
  HealthRetention retention;
  /** "section: message" for every section that could not be read. */
  final List<String> sectionErrors = new ArrayList<>();

  HealthServer(String label, boolean configuredPrimary, String endpoint, String url,
      Properties props) {
    this(label, configuredPrimary, endpoint, url, props, null);
  }

  /**
   * @param settings how the check's session gets its timeouts: in the startup packet, or behind
   *     a pooler in the one read-only transaction the whole check runs in; null: the packet
   */
  HealthServer(String label, boolean configuredPrimary, String endpoint, String url,
      Properties props, StartupSettings settings) {
    this.label = label;
    this.configuredPrimary = configuredPrimary;
    this.endpoint = endpoint;
    this.address = endpoint;
    this.url = url;
    this.props = props;
    this.settings = settings;
  }

  private final StartupSettings settings;

  /**
   * The check reads in one read-only transaction (pgjdbc's {@code BEGIN READ ONLY}), never a
   * read-only session: behind a pooler nothing may stay on a session, which the pooler shares
   * with others. A savepoint before each query (pgjdbc's autosave) keeps a section that fails to
   * that section. Behind a pooler the transaction also sets its own timeouts ({@code t}).
   * Rolled back at {@link #close()}.
   */
  private static void readOnlyTransaction(Connection c, TransactionSettings t)
      throws SQLException {
    c.unwrap(PGConnection.class).setAutosave(AutoSave.ALWAYS);
    c.setReadOnly(true);
    c.setAutoCommit(false);
    if (t != null) {
      try (Statement st = c.createStatement()) {
        st.execute(t.block);
      }
    }
  }

  /** True when it answered and says it is a standby. */
  boolean isStandby() {
    return reachable && Boolean.TRUE.equals(inRecovery);
  }

  /** True when it answered and says it is not a standby. */
  boolean isPrimary() {
    return reachable && Boolean.FALSE.equals(inRecovery);
  }

  /** Reads everything but the largest tables; never throws. */
  void collect(String heartbeatTable, Long writerLockKey, String writerLockKeyError) {
    if (connection == null && !open()) {
      return;
    }
    try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(INFO_SQL)) {
      rs.next();
      version = rs.getString(1);
      versionNum = rs.getInt(2);
      inRecovery = rs.getBoolean(3);
      maxConnections = rs.getInt(4);
      boolean paused = rs.getBoolean(5);
      replayPaused = rs.wasNull() ? null : paused;
      walLsn = rs.getString(6);
      clientConnections = rs.getInt(7);
      reachable = true;
    } catch (SQLException | RuntimeException e) {
      error = "connected, but the first query failed: " + message(e);
      return;
    }

    section("clock offset", this::measureClock);
    section("identity (pg_control_system)", () -> identity = ServerIdentity.read(connection));
    readHeartbeat(heartbeatTable);
    if (inRecovery) {
      section("pg_stat_wal_receiver", () -> {
        try (Statement st = connection.createStatement(); ResultSet rs =
            st.executeQuery(WAL_RECEIVER_SQL)) {
          walReceiver = rs.next() ? rs.getString(1) : null;
        }
      });
    } else if (configuredPrimary) {
      section("writer lock (pg_locks)", () -> {
        if (writerLockKey == null) {
          throw new SQLException(writerLockKeyError);
        }
        try (PreparedStatement ps = connection.prepareStatement(WRITER_LOCK_SQL)) {
          ps.setLong(1, writerLockKey >>> 32);
          ps.setLong(2, writerLockKey & 0xFFFFFFFFL);
          try (ResultSet rs = ps.executeQuery()) {
            writerLock = HealthTable.read(rs, WRITER_LOCK);
          }
        }
      });
      section("pg_stat_replication", () -> replication = query(REPLICATION_SQL, REPLICATION));
      section("pg_replication_slots", () -> slots = query(String.format(SLOTS_SQL,
          versionNum >= 130000 ? "wal_status" : "NULL::text"), SLOTS));
      section("retention (omnium-ops tables)", () -> retention = HealthRetention.read(connection));
    }
    section("pg_stat_activity connections", () -> connections = query(CONNECTIONS_SQL,
        CONNECTIONS));
    section("oldest transactions", () -> oldestTransactions = query(TRANSACTIONS_SQL
        + " ORDER BY xact_start, pid LIMIT " + TOP_TRANSACTIONS, TRANSACTIONS));
    section("idle-in-transaction sessions", () -> idleInTransaction = query(TRANSACTIONS_SQL
        + " AND state IN ('idle in transaction', 'idle in transaction (aborted)')"
        + " ORDER BY xact_start, pid LIMIT " + TOP_TRANSACTIONS, TRANSACTIONS));
    section("lock waits", () -> lockWaits = query(lockWaitsSql(versionNum), LOCK_WAITS));
  }

  /**
   * Opens the check's session; on a replica address also reads which server it reached
   * ({@link ServerKey}, in autocommit before the check's transaction). False, with
   * {@link #error} set, when it cannot.
   */
  boolean open() {
    try {
      PgConnector connector = new PgConnector(url, props, label + " " + endpoint + " (check)")
          .settingsBy(settings);
      connection = connector.connect();
      if (!configuredPrimary) {
        try {
          server = ServerKey.read(connection);
        } catch (SQLException e) {
          server = null; // the server stays the address's alone
        }
      }
      readOnlyTransaction(connection, connector.perTransaction());
      return true;
    } catch (SQLException | RuntimeException e) {
      error = message(e);
      close();
      return false;
    }
  }

  /** Another, unopened session to the same address. */
  HealthServer sibling() {
    return new HealthServer(label, configuredPrimary, endpoint, url, props, settings);
  }

  /** The largest tables, on this server's open connection. */
  HealthTable largestTables() throws SQLException {
    return query(TABLES_SQL, TABLES);
  }

  void close() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      try {
        if (!c.getAutoCommit()) c.rollback(); // the check's read-only transaction
        c.close();
      } catch (SQLException ignored) {
        // the report is written already
      }
    }
  }

  /** A few round trips; the shortest wins (see {@link ClockOffset}). */
  private void measureClock() throws SQLException {
    try (Statement st = connection.createStatement()) {
      for (int i = 0; i < 3; i++) {
        long sent = ClockOffset.nowMicros();
        try (ResultSet rs = st.executeQuery(
            "SELECT extract(epoch FROM clock_timestamp())::float8")) {
          long received = ClockOffset.nowMicros();
          rs.next();
          clockOffset.record(sent, received, rs.getDouble(1));
        }
      }
    }
  }

  /** The primary's WAL insert position now (unsigned). */
  long insertLsn() throws SQLException {
    return lsn("SELECT pg_current_wal_insert_lsn()::text");
  }

  /** A standby's replay position now (unsigned), 0 when it has none. */
  long replayLsn() throws SQLException {
    return lsn("SELECT pg_last_wal_replay_lsn()::text");
  }

  private long lsn(String sql) throws SQLException {
    try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      String v = rs.next() ? rs.getString(1) : null;
      return v == null ? 0 : Lsn.parse(v);
    }
  }

  private void readHeartbeat(String table) {
    String sql = "SELECT extract(epoch FROM now() - beat_at)::float8 FROM " + table
        + " WHERE id = 1";
    try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      if (!rs.next()) {
        beat = Beat.NO_ROW;
        return;
      }
      double s = rs.getDouble(1);
      if (rs.wasNull()) {
        beat = Beat.NO_ROW;
        return;
      }
      beatSeconds = Math.max(0.0, s); // clock skew between servers: never negative
      beat = Beat.OK;
    } catch (SQLException e) {
      String state = e.getSQLState();
      if ("42P01".equals(state) || "3F000".equals(state)) {
        beat = Beat.NO_TABLE; // undefined table, or its schema
      } else if ("42703".equals(state) || "42883".equals(state) || "42804".equals(state)) {
        beat = Beat.BAD_TABLE; // no id/beat_at column, or beat_at not a timestamp
      } else if ("42501".equals(state)) {
        beat = Beat.PERMISSION_DENIED;
      } else if ("42601".equals(state)) {
        beat = Beat.BAD_TABLE_NAME;
      } else if ("40001".equals(state)) {
        beat = Beat.RECOVERY_CONFLICT;
      } else {
        beat = Beat.ERROR;
      }
      beatError = message(e);
    } catch (RuntimeException e) {
      beat = Beat.ERROR;
      beatError = message(e);
    }
  }

  private static String lockWaitsSql(int versionNum) {
    // pg_locks.waitstart exists from PostgreSQL 14 on; before that, when the query started.
    String since = versionNum >= 140000 ? "coalesce(l.waitstart, a.query_start)" : "a.query_start";
    return "SELECT a.pid, coalesce(nullif(a.application_name, ''), '(' || a.backend_type || ')'),"
        + " l.locktype, l.mode,"
        + " CASE WHEN l.relation IS NOT NULL THEN l.relation::regclass::text END,"
        + " pg_blocking_pids(a.pid), extract(epoch FROM now() - " + since + ")::float8 AS waiting,"
        + " left(a.query, " + HealthTable.QUERY_SQL_CHARS + ")"
        + " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        + " WHERE NOT l.granted AND a.pid <> pg_backend_pid()"
        + " ORDER BY waiting DESC NULLS LAST, a.pid LIMIT " + TOP_LOCK_WAITS;
  }

  private HealthTable query(String sql, Column[] columns) throws SQLException {
    try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      return HealthTable.read(rs, columns);
    }
  }

  private interface Section {
    void read() throws SQLException;
  }

  private void section(String name, Section s) {
    try {
      s.read();
    } catch (SQLException | RuntimeException e) {
      sectionErrors.add(name + ": " + message(e));
    }
  }

  /** One line, no stack trace; pgjdbc's messages name host and port, never the password. */
  static String message(Throwable e) {
    String m = e.getMessage();
    if (m == null || m.isBlank()) {
      m = e.getClass().getSimpleName();
    }
    m = m.replaceAll("\\s+", " ").trim();
    if (e instanceof SQLException && ((SQLException) e).getSQLState() != null
        && !m.contains(((SQLException) e).getSQLState())) {
      m += " (SQLState " + ((SQLException) e).getSQLState() + ")";
    }
    return m;
  }
}
