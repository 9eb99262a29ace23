package dev.omnium.ops;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * omnium-ops' own tables, created on the first run that changes something (in the first schema
 * of the session's search_path, like any unqualified name): the log of every action, the holds,
 * the lease that elects one runner in a fleet, and one status row per rule for {@code check}.
 */
final class OpsTables {
  static final String LOG = "omnium_retention_log";
  static final String HOLD = "omnium_retention_hold";
  static final String LEASE = "omnium_retention_lease";
  static final String STATUS = "omnium_retention_status";

  static final List<String> DDL = List.of(
      "CREATE TABLE IF NOT EXISTS " + LOG + " ("
          + "id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
          + " run_id text NOT NULL, run_day date, action text NOT NULL, rule text,"
          + " table_name text, partition_name text, rows bigint,"
          + " started_at timestamptz NOT NULL, finished_at timestamptz NOT NULL,"
          + " actor text, detail text)",
      "CREATE TABLE IF NOT EXISTS " + HOLD + " ("
          + "table_name text PRIMARY KEY, reason text NOT NULL, held_by text NOT NULL,"
          + " held_at timestamptz NOT NULL DEFAULT now())",
      "CREATE TABLE IF NOT EXISTS " + LEASE + " ("
          + "id int PRIMARY KEY CHECK (id = 1), holder text NOT NULL, token text NOT NULL,"
          + " acquired_at timestamptz NOT NULL, expires_at timestamptz NOT NULL,"
          + " done_day date, done_at timestamptz)",
      "CREATE TABLE IF NOT EXISTS " + STATUS + " ("
          + "rule text PRIMARY KEY, table_name text NOT NULL, kind text NOT NULL,"
          + " keep_days int NOT NULL, months_ahead int, oldest_kept text, default_rows bigint,"
          + " held boolean NOT NULL, outcome text NOT NULL, detail text,"
          + " run_id text NOT NULL, run_at timestamptz NOT NULL)");

  private OpsTables() {
  }

  /** True when the tables exist (a dry run reads holds only then, and creates nothing). */
  static boolean exist(Connection c) throws SQLException {
    return Sql.one(c, "SELECT to_regclass(?) IS NOT NULL AND to_regclass(?) IS NOT NULL", LOG,
        HOLD).equals("t");
  }

  /**
   * Creates the tables when missing. Two processes creating them at once can collide on
   * PostgreSQL's catalog (23505 / 42P07 even with IF NOT EXISTS): the loser tries again.
   */
  static void create(Connection c, LockRetry locks) throws SQLException {
    for (int attempt = 1; ; attempt++) {
      try {
        locks.inTransaction(c, conn -> {
          for (String ddl : DDL) {
            Sql.exec(conn, ddl);
          }
          return null;
        }, null);
        return;
      } catch (SQLException e) {
        String s = e.getSQLState();
        if (attempt >= 3 || !("23505".equals(s) || "42P07".equals(s))) {
          throw e;
        }
      }
    }
  }

  /** Writes one log row (auto-commit). */
  static void log(Connection c, String runId, LocalDate runDay, RetentionReport.Action a,
      String actor) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + LOG
        + " (run_id, run_day, action, rule, table_name, partition_name, rows, started_at,"
        + " finished_at, actor, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      ps.setString(1, runId);
      ps.setObject(2, runDay);
      ps.setString(3, a.verb().word());
      ps.setString(4, a.rule());
      ps.setString(5, a.table());
      ps.setString(6, a.partition());
      if (a.rows() == null) {
        ps.setNull(7, Types.BIGINT);
      } else {
        ps.setLong(7, a.rows());
      }
      ps.setTimestamp(8, Timestamp.from(a.startedAt()));
      ps.setTimestamp(9, Timestamp.from(a.finishedAt()));
      ps.setString(10, actor);
      ps.setString(11, a.detail());
      ps.executeUpdate();
    }
  }

  /** True when the same skip or problem was logged already on {@code runDay}. */
  static boolean loggedOn(Connection c, LocalDate runDay, RetentionReport.Action a)
      throws SQLException {
    return Sql.one(c, "SELECT 1 FROM " + LOG + " WHERE run_day = ? AND action = ?"
        + " AND rule IS NOT DISTINCT FROM ? AND table_name IS NOT DISTINCT FROM ?"
        + " AND partition_name IS NOT DISTINCT FROM ? AND detail IS NOT DISTINCT FROM ?"
        + " LIMIT 1", runDay, a.verb().word(), a.rule(), a.table(), a.partition(), a.detail())
        != null;
  }

  /** A hold: who, why, since when. */
  record Hold(String table, String reason, String by, Instant since) {
    String describe() {
      return "held by " + by + " since " + since + ": " + reason;
    }
  }

  /** Every hold, by table ({@code schema.name}); empty when the tables do not exist yet. */
  static Map<String, Hold> holds(Connection c) throws SQLException {
    Map<String, Hold> holds = new LinkedHashMap<>();
    if (!exist(c)) {
      return holds;
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT table_name, reason, held_by, held_at"
        + " FROM " + HOLD + " ORDER BY table_name"); ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        holds.put(rs.getString(1), new Hold(rs.getString(1), rs.getString(2), rs.getString(3),
            rs.getTimestamp(4).toInstant()));
      }
    }
    return holds;
  }
}
