package dev.omnium.jdbc;

import static dev.omnium.jdbc.HealthTable.col;

import dev.omnium.jdbc.HealthTable.Column;
import dev.omnium.jdbc.HealthTable.Kind;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The retention section of {@code check}: what omnium-ops recorded in its own tables on the
 * primary (one status row per rule as of its last run, the holds, the run's lease). The driver
 * does not depend on omnium-ops; it reads these tables when they exist, and says so when they do
 * not. Findings are notes only: retention is no reason to take a service out of rotation.
 */
final class HealthRetention {
  /** A run older than this is a note: the daily run is not running. */
  static final double STALE_RUN_SECONDS = 48 * 3600;

  static final Column[] RULES = {
      col("rule", "rule", Kind.TEXT), col("monthsAhead", "months ahead", Kind.INT),
      col("oldestKept", "oldest month kept", Kind.TEXT),
      col("defaultRows", "rows in default", Kind.INT), col("held", "held", Kind.BOOL),
      col("outcome", "last run", Kind.TEXT), col("runAgeSeconds", "run age", Kind.SECONDS),
      col("detail", "detail", Kind.QUERY)};
  static final Column[] HOLDS = {
      col("table", "table", Kind.TEXT), col("heldBy", "held by", Kind.TEXT),
      col("heldSeconds", "held for", Kind.SECONDS), col("reason", "reason", Kind.QUERY)};
  static final Column[] LEASE = {
      col("holder", "last runner", Kind.TEXT), col("doneDay", "last day done", Kind.TEXT),
      col("doneAgeSeconds", "done", Kind.SECONDS), col("running", "running now", Kind.BOOL)};

  /** Null when omnium-ops has not run on this database. */
  HealthTable rules;
  HealthTable holds;
  HealthTable lease;

  /** Reads the tables; leaves everything null when omnium-ops never ran here. */
  static HealthRetention read(Connection c) throws SQLException {
    HealthRetention r = new HealthRetention();
    try (Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT to_regclass('omnium_retention_status') IS NOT"
          + " NULL AND to_regclass('omnium_retention_hold') IS NOT NULL"
          + " AND to_regclass('omnium_retention_lease') IS NOT NULL")) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return r;
        }
      }
      try (ResultSet rs = st.executeQuery("SELECT rule, months_ahead, oldest_kept, default_rows,"
          + " held, outcome, extract(epoch FROM now() - run_at)::float8, detail"
          + " FROM omnium_retention_status ORDER BY rule")) {
        r.rules = HealthTable.read(rs, RULES);
      }
      try (ResultSet rs = st.executeQuery("SELECT table_name, held_by,"
          + " extract(epoch FROM now() - held_at)::float8, reason FROM omnium_retention_hold"
          + " ORDER BY table_name")) {
        r.holds = HealthTable.read(rs, HOLDS);
      }
      try (ResultSet rs = st.executeQuery("SELECT holder, done_day::text,"
          + " extract(epoch FROM now() - done_at)::float8, expires_at > now()"
          + " FROM omnium_retention_lease")) {
        r.lease = HealthTable.read(rs, LEASE);
      }
    }
    return r;
  }

  /** One sentence per thing worth a look. */
  List<String> notes() {
    List<String> notes = new ArrayList<>();
    if (rules == null) {
      return notes;
    }
    for (int i = 0; i < rules.size(); i++) {
      String rule = (String) rules.get(i, "rule");
      Object ahead = rules.get(i, "monthsAhead");
      Object defaultRows = rules.get(i, "defaultRows");
      String outcome = (String) rules.get(i, "outcome");
      if (ahead instanceof Long && (Long) ahead < 1) {
        notes.add("retention: " + rule + ": " + ((Long) ahead < 0 ? "no partition for this month"
            : "no partition for next month") + " (as of the last run)");
      }
      if (defaultRows instanceof Long && (Long) defaultRows > 0) {
        notes.add("retention: " + rule + ": " + defaultRows + " rows in the default partition");
      }
      if ("problem".equals(outcome) || "error".equals(outcome)) {
        notes.add("retention: " + rule + ": last run reported a" + ("error".equals(outcome)
            ? "n error" : " problem") + ": " + rules.get(i, "detail"));
      }
      Object age = rules.get(i, "runAgeSeconds");
      if (age instanceof Double && (Double) age > STALE_RUN_SECONDS) {
        notes.add("retention: " + rule + ": last run " + HealthTable.seconds((Double) age)
            + " ago: is the daily run scheduled?");
      }
    }
    return notes;
  }

  void text(StringBuilder out) {
    if (rules == null) {
      out.append("  (no omnium-ops tables: retention is not set up on this database)\n");
      return;
    }
    if (rules.isEmpty()) {
      out.append("  (no rule recorded yet)\n");
    } else {
      rules.printText(out, "  ");
    }
    out.append("  holds:\n");
    if (holds.isEmpty()) {
      out.append("    (none)\n");
    } else {
      holds.printText(out, "    ");
    }
    if (!lease.isEmpty()) {
      lease.printText(out, "  ");
    }
  }

  Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("setUp", rules != null);
    m.put("rules", rules == null ? null : rules.toJson());
    m.put("holds", holds == null ? null : holds.toJson());
    m.put("lastRun", lease == null || lease.isEmpty() ? null : lease.toJson().get(0));
    return m;
  }
}
