package dev.omnium.ops.it;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Fixtures and server-side probes for the ops suites, through plain pgjdbc. */
final class Db {
  private Db() {
  }

  /** Creates {@code table} partitioned by range on {@code at timestamptz}, month partitions. */
  static void monthlyTable(PgSandbox sandbox, String table, String firstMonth, int months)
      throws SQLException {
    sandbox.execOnPrimary("CREATE TABLE " + table + " (id bigint GENERATED ALWAYS AS IDENTITY,"
        + " at timestamptz NOT NULL, body text, PRIMARY KEY (id, at)) PARTITION BY RANGE (at)",
        "DO $$ DECLARE m date := date '" + firstMonth + "-01'; BEGIN FOR i IN 1.." + months
        + " LOOP EXECUTE format('CREATE TABLE %I PARTITION OF " + table
        + " FOR VALUES FROM (%L) TO (%L)', '" + table + "_' || to_char(m, 'YYYY_MM'),"
        + " m::text || ' 00:00:00+00', (m + interval '1 month')::date::text || ' 00:00:00+00');"
        + " m := (m + interval '1 month')::date; END LOOP; END $$");
  }

  /** Rows every {@code step} from {@code from} (inclusive) to {@code to} (exclusive), UTC. */
  static void rows(PgSandbox sandbox, String table, String from, String to, String step)
      throws SQLException {
    sandbox.execOnPrimary("INSERT INTO " + table + " (at, body) SELECT g, 'row at ' || g FROM"
        + " generate_series(timestamptz '" + from + " 00:00:00+00', timestamptz '" + to
        + " 00:00:00+00' - interval '1 microsecond', interval '" + step + "') g");
  }

  /** Another session reads {@code table} and keeps its transaction open: ACCESS SHARE held. */
  static Connection holdTable(PgSandbox sandbox, String table) throws SQLException {
    Connection c = sandbox.cluster().connect(sandbox.primary());
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.execute("SELECT count(*) FROM " + table);
    }
    return c;
  }

  /** Commits {@code c} after {@code millis} on a thread of its own; join it when done. */
  static Thread commitLater(Connection c, long millis) {
    Thread t = new Thread(() -> {
      Poll.pause(millis);
      try {
        c.commit();
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }, "commit-later");
    t.start();
    return t;
  }

  static long count(PgSandbox sandbox, String sql) throws SQLException {
    return Long.parseLong(sandbox.queryOne(sandbox.primary(), sql));
  }

  /** The partitions of {@code table}, by name. */
  static List<String> partitions(PgSandbox sandbox, String table) throws SQLException {
    return list(sandbox, "SELECT c.relname FROM pg_inherits i JOIN pg_class c"
        + " ON c.oid = i.inhrelid WHERE i.inhparent = '" + table + "'::regclass ORDER BY 1");
  }

  static List<String> list(PgSandbox sandbox, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = sandbox.cluster().connect(sandbox.primary());
        Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        StringBuilder row = new StringBuilder();
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
          row.append(i == 1 ? "" : "|").append(rs.getString(i));
        }
        out.add(row.toString());
      }
    }
    return out;
  }

  /** The log rows of one table (action|partition|rows), oldest first. */
  static List<String> log(PgSandbox sandbox, String table) throws SQLException {
    try (Connection c = sandbox.cluster().connect(sandbox.primary());
        PreparedStatement ps = c.prepareStatement("SELECT action || '|' || coalesce(partition_name,"
            + " '') || '|' || coalesce(rows::text, '') FROM omnium_retention_log"
            + " WHERE table_name = ? ORDER BY id")) {
      ps.setString(1, "public." + table);
      List<String> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
      return out;
    }
  }

  static long logRows(PgSandbox sandbox) throws SQLException {
    if (sandbox.queryOne(sandbox.primary(), "SELECT to_regclass('omnium_retention_log')")
        == null) {
      return -1;
    }
    return count(sandbox, "SELECT count(*) FROM omnium_retention_log");
  }
}
