package dev.omnium.conformance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Session state set through JDBC or SQL, and what the next logical connection inherits from it
 * (issue 12 defects 2, 3 and 10).
 */
final class SessionStateScenarios {
  private SessionStateScenarios() { }

  static void schemas(Run r) throws Exception {
    r.setup("CREATE SCHEMA IF NOT EXISTS tenant_b",
        "DROP TABLE IF EXISTS tenant_b.marker", "DROP TABLE IF EXISTS public.marker",
        "CREATE TABLE tenant_b.marker (v text)", "INSERT INTO tenant_b.marker VALUES ('tenant b')",
        "CREATE TABLE public.marker (v text)", "INSERT INTO public.marker VALUES ('public')");
  }

  /** What a dirty reader does to its read-only connection {@code i}. */
  @FunctionalInterface
  interface Dirt {
    void apply(Connection c, int i) throws Exception;
  }

  /** Opens {@code n} connections at once, runs {@code sql} read-only on each, closes them all. */
  static void dirtyReaders(Run r, int n, String sql) throws Exception {
    dirtyReaders(r, n, (c, i) -> {
      try (Statement st = c.createStatement()) {
        st.execute(sql);
      }
    });
  }

  /**
   * Opens {@code n} connections at once, each read-only and then dirtied by {@code dirt}, and
   * closes them all.
   */
  static void dirtyReaders(Run r, int n, Dirt dirt) throws Exception {
    Connection[] cs = new Connection[n];
    for (int i = 0; i < n; i++) {
      cs[i] = r.open();
      cs[i].setReadOnly(true);
      dirt.apply(cs[i], i);
    }
    for (Connection c : cs) {
      c.close();
    }
  }

  /** Runs {@code SELECT 1} on {@code c} and closes its result. */
  static void selectOne(Connection c) throws Exception {
    try (Statement st = c.createStatement()) {
      st.executeQuery("SELECT 1").close();
    }
  }

  /**
   * Three dirty readers ran {@code sql}; then three read-only transactions each try a write
   * (which must fail on every route) and roll back.
   */
  static Scenario.Program writesAfterDirtyReaders(String sql) {
    return r -> {
      r.table("t");
      dirtyReaders(r, 3, sql);
      for (int i = 0; i < 3; i++) {
        Connection c = r.openReadOnlyTransaction();
        r.u("write" + i, c, "INSERT INTO t VALUES (" + i + ", 'leak')");
        c.rollback();
        c.close();
      }
      r.rows("t");
    };
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("session-state")
        .add("set-schema", r -> {
          schemas(r);
          Connection c = r.open();
          r.act("set", () -> c.setSchema("tenant_b"));
          r.call("get", c::getSchema);
          r.q("current", c, "SELECT current_schema()");
          r.q("marker", c, "SELECT v FROM marker");
        })
        .add("set-schema-read-only", r -> {
          schemas(r);
          Connection c = r.open();
          c.setReadOnly(true);
          r.act("set", () -> c.setSchema("tenant_b"));
          r.q("marker", c, "SELECT v FROM marker");
          c.setAutoCommit(false);
          r.q("marker-tx", c, "SELECT v FROM marker");
          c.commit();
        })
        .add("raw-search-path", r -> {
          schemas(r);
          Connection c = r.open();
          r.u("set", c, "SET search_path = tenant_b");
          r.call("get", c::getSchema);
          r.q("marker", c, "SELECT v FROM marker");
        })
        .add("schema-does-not-leak-to-next-reader", r -> {
          schemas(r);
          dirtyReaders(r, 3, (c, i) -> {
            c.setSchema("tenant_b");
            selectOne(c);
          });
          for (int i = 0; i < 3; i++) {
            Connection c = r.open();
            c.setReadOnly(true);
            r.call("schema" + i, c::getSchema);
            r.q("marker" + i, c, "SELECT v FROM marker");
            c.close();
          }
        })
        .add("isolation-does-not-leak-to-next-reader", r -> {
          dirtyReaders(r, 3, (c, i) -> {
            c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
            c.setAutoCommit(false);
            selectOne(c);
            c.commit();
          });
          for (int i = 0; i < 3; i++) {
            Connection c = r.openReadOnlyTransaction();
            r.call("get" + i, c::getTransactionIsolation);
            r.q("server" + i, c, "SELECT current_setting('transaction_isolation')");
            c.commit();
            c.close();
          }
        })
        .add("read-write-setting-does-not-leak", writesAfterDirtyReaders(
            "SET default_transaction_read_only = off"))
        .add("session-characteristics-do-not-leak", writesAfterDirtyReaders(
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE"))
        .add("timezone-does-not-leak", r -> {
          dirtyReaders(r, 3, "SET TimeZone = 'Pacific/Kiritimati'");
          for (int i = 0; i < 3; i++) {
            Connection c = r.open();
            c.setReadOnly(true);
            r.call("reported" + i,
                () -> c.unwrap(PGConnection.class).getParameterStatus("TimeZone"));
            r.q("server" + i, c, "SHOW TimeZone");
            c.close();
          }
        })
        .add("client-info-does-not-leak", r -> {
          dirtyReaders(r, 3, (c, i) -> {
            c.setClientInfo("ApplicationName", "tenant-" + i);
            selectOne(c);
          });
          for (int i = 0; i < 3; i++) {
            Connection c = r.open();
            c.setReadOnly(true);
            r.call("client-info" + i, () -> c.getClientInfo("ApplicationName"));
            r.where("where" + i, c);
            c.close();
          }
        })
        .add("type-map", r -> {
          Connection c = r.open();
          r.call("initial", () -> c.getTypeMap().size());
          Map<String, Class<?>> m = new HashMap<>();
          m.put("public.some_type", String.class);
          r.act("set", () -> c.setTypeMap(m));
          r.call("get", () -> c.getTypeMap().size());
        })
        .add("catalog", r -> {
          Connection c = r.open();
          r.call("get", c::getCatalog);
          r.act("set", () -> c.setCatalog("other"));
          r.call("after", c::getCatalog);
        })
        .add("temp-table-survives-statements", r -> {
          Connection c = r.open();
          r.u("create", c, "CREATE TEMP TABLE tmp_conf (x int)");
          r.u("insert", c, "INSERT INTO tmp_conf VALUES (1)");
          r.q("read", c, "SELECT count(*) FROM tmp_conf");
        })
        .add("session-advisory-lock", r -> {
          Connection c = r.open();
          r.q("lock", c, "SELECT pg_advisory_lock(424242)");
          r.activity("held");
          r.q("unlock", c, "SELECT pg_advisory_unlock(424242)");
          r.activity("released");
        })
        .add("listen-notify", r -> {
          Connection c = r.open();
          r.u("listen", c, "LISTEN conf_channel");
          Connection other = r.open();
          r.u("notify", other, "NOTIFY conf_channel, 'hello'");
          r.q("roundtrip", c, "SELECT 1");
          r.call("notifications", () -> {
            PGNotification[] ns = c.unwrap(PGConnection.class).getNotifications(5000);
            StringBuilder s = new StringBuilder();
            for (PGNotification n : ns == null ? new PGNotification[0] : ns) {
              s.append(n.getName()).append(':').append(n.getParameter()).append(' ');
            }
            return s.toString();
          });
        })
        .add("serialization-failure-keeps-its-state", r -> {
          Connection c = r.open();
          c.setReadOnly(true);
          r.u("raise", c, "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$");
          c.setAutoCommit(false);
          r.u("raise-tx", c,
              "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$");
          r.act("rollback", c::rollback);
          r.q("after", c, "SELECT 'fine'");
          c.commit();
        })
        .add("prepared-statement-replays-parameters", r -> {
          schemas(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("SELECT ?::text || v FROM marker")) {
            ps.setString(1, "rw:");
            r.call("rw", () -> Run.renderRows(ps.executeQuery()));
            c.setReadOnly(true);
            r.call("ro", () -> Run.renderRows(ps.executeQuery()));
            c.setReadOnly(false);
            r.call("rw-again", () -> Run.renderRows(ps.executeQuery()));
          }
        });
  }
}
