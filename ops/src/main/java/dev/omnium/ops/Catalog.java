package dev.omnium.ops;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** What omnium-ops reads from PostgreSQL's catalog. */
final class Catalog {
  /** A table as PostgreSQL resolved a name: its oid, schema, name and kind. */
  record Table(long oid, String schema, String name, char kind) {
    String qualified() {
      return schema + "." + name;
    }

    String sql() {
      return Sql.qualified(schema, name);
    }
  }

  /** One partition of a partitioned table; {@code range} null for DEFAULT or a bound not ours. */
  record Partition(Table table, String bound, Months.Range range, boolean isDefault,
      boolean detachPending) { }

  private Catalog() {
  }

  /** The table {@code name} resolves to on this session's search_path, or null. */
  static Table table(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT c.oid, n.nspname, c.relname,"
        + " c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        + " WHERE c.oid = to_regclass(?)")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Table(rs.getLong(1), rs.getString(2), rs.getString(3),
            rs.getString(4).charAt(0)) : null;
      }
    }
  }

  /** The type of column {@code column} ({@code format_type}), or null when there is none. */
  static String columnType(Connection c, long table, String column) throws SQLException {
    return Sql.one(c, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
        + " WHERE attrelid = ? AND attname = ? AND attnum > 0 AND NOT attisdropped", table,
        column);
  }

  /**
   * How a table is partitioned: {@code "r <column>"} for a range on one column, another
   * description otherwise, or null when it is not partitioned.
   */
  static String partitionKey(Connection c, long table) throws SQLException {
    return Sql.one(c, "SELECT pt.partstrat::text || ' ' || CASE WHEN pt.partnatts = 1"
        + " AND pt.partattrs[0] <> 0 THEN a.attname::text ELSE pg_get_partkeydef(pt.partrelid)"
        + " END FROM pg_partitioned_table pt LEFT JOIN pg_attribute a"
        + " ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]"
        + " WHERE pt.partrelid = ?", table);
  }

  /**
   * The partitions of {@code parent}, with their bounds printed in UTC and ISO style (set for
   * this transaction only, so a pooler carries nothing to another client).
   */
  static List<Partition> partitions(Connection c, long parent) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    List<Partition> out = new ArrayList<>();
    try {
      c.setAutoCommit(false);
      Sql.exec(c, "SELECT set_config('DateStyle', 'ISO, MDY', true),"
          + " set_config('TimeZone', 'UTC', true)");
      try (PreparedStatement ps = c.prepareStatement("SELECT c.oid, n.nspname, c.relname,"
          + " c.relkind::text, pg_get_expr(c.relpartbound, c.oid), i.inhdetachpending"
          + " FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
          + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.inhparent = ?"
          + " ORDER BY c.relname")) {
        ps.setLong(1, parent);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Table t = new Table(rs.getLong(1), rs.getString(2), rs.getString(3),
                rs.getString(4).charAt(0));
            String bound = rs.getString(5);
            boolean isDefault = "DEFAULT".equals(bound);
            out.add(new Partition(t, bound, isDefault ? null : Months.parseRange(bound),
                isDefault, rs.getBoolean(6)));
          }
        }
      }
      c.commit();
    } catch (SQLException | RuntimeException e) {
      LockRetry.rollbackQuietly(c, e);
      throw e;
    } finally {
      c.setAutoCommit(autoCommit);
    }
    return out;
  }
}
