package dev.omnium.ops;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/** Holds and releases: a row in {@code omnium_retention_hold} and a log row each. */
final class Holds {
  private final Retention retention;

  Holds(Retention retention) {
    this.retention = retention;
  }

  Retention.HoldResult hold(String table, String reason, String by) throws SQLException {
    Objects.requireNonNull(table, "table");
    requireText("reason", reason);
    requireText("by", by);
    try (Connection c = retention.source.open()) {
      c.setAutoCommit(true);
      Catalog.Table t = resolve(c, table);
      OpsTables.create(c, retention.locks);
      Instant start = Instant.now();
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + OpsTables.HOLD
          + " (table_name, reason, held_by) VALUES (?, ?, ?) ON CONFLICT (table_name) DO NOTHING"
          + " RETURNING held_at")) {
        ps.setString(1, t.qualified());
        ps.setString(2, reason);
        ps.setString(3, by);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            OpsTables.Hold h = OpsTables.holds(c).get(t.qualified());
            return new Retention.HoldResult(false, t.qualified() + " is already "
                + (h == null ? "held" : h.describe()) + ": nothing changed");
          }
        }
      }
      log(c, "hold", t.qualified(), by, reason, start);
      return new Retention.HoldResult(true, "held " + t.qualified() + " (by " + by + ": " + reason
          + "): its months are not dropped and its rows not trimmed until released");
    }
  }

  Retention.HoldResult release(String table, String by) throws SQLException {
    Objects.requireNonNull(table, "table");
    requireText("by", by);
    try (Connection c = retention.source.open()) {
      c.setAutoCommit(true);
      Catalog.Table t = Catalog.table(c, table);
      // A dropped table's hold can still be released by the name it was held under.
      String name = t != null ? t.qualified() : table.contains(".") ? table : null;
      if (!OpsTables.exist(c)) {
        return new Retention.HoldResult(false, table + " is not held: nothing changed");
      }
      Instant start = Instant.now();
      String reason = null;
      try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + OpsTables.HOLD
          + " WHERE table_name = coalesce(?, (SELECT table_name FROM " + OpsTables.HOLD
          + " WHERE split_part(table_name, '.', 2) = ? LIMIT 1)) RETURNING table_name, reason")) {
        ps.setString(1, name);
        ps.setString(2, table);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            name = rs.getString(1);
            reason = rs.getString(2);
          } else {
            return new Retention.HoldResult(false, table + " is not held: nothing changed");
          }
        }
      }
      log(c, "release", name, by, "released (it was held: " + reason + ")", start);
      return new Retention.HoldResult(true, "released " + name + " (by " + by + ")");
    }
  }

  private static Catalog.Table resolve(Connection c, String table) throws SQLException {
    Catalog.Table t = Catalog.table(c, table);
    if (t == null) {
      throw new SQLException("no table " + table + " (on the search_path of the connection):"
          + " nothing held", "42P01");
    }
    return t;
  }

  private static void log(Connection c, String action, String table, String by, String detail,
      Instant start) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + OpsTables.LOG
        + " (run_id, action, table_name, started_at, finished_at, actor, detail)"
        + " VALUES (?, ?, ?, ?, clock_timestamp(), ?, ?)")) {
      ps.setString(1, UUID.randomUUID().toString());
      ps.setString(2, action);
      ps.setString(3, table);
      ps.setTimestamp(4, Timestamp.from(start));
      ps.setString(5, by);
      ps.setString(6, detail);
      ps.executeUpdate();
    }
  }

  private static void requireText(String what, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(what + " is required");
    }
  }
}
