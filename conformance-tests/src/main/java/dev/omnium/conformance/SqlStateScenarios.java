package dev.omnium.conformance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import org.postgresql.jdbc.PgStatement;

/**
 * Session state set with SQL (issue 30 item 4, issue 32 item 4): settings follow the logical
 * connection as they follow a pgjdbc connection, and nothing a previous user left on a pooled
 * session (a role, a setting, a prepared statement, a held cursor, a temp table, a lock, a
 * channel) reaches the next connection.
 */
final class SqlStateScenarios {
  private SqlStateScenarios() { }

  /** A role without privileges, and {@code t} with one row it may not read. */
  static void limitedRole(Run r) throws Exception {
    r.table("t");
    r.setup("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'conf_limited')"
            + " THEN CREATE ROLE conf_limited NOLOGIN; END IF; END $$",
        "INSERT INTO t VALUES (1, 'secret')");
  }

  /** Who the next connections are, read-only and read-write, and whether they may read t. */
  static void nextConnectionsIdentity(Run r) throws Exception {
    for (int i = 0; i < 3; i++) {
      Connection c = r.open();
      c.setReadOnly(true);
      r.q("reader-user" + i, c, "SELECT current_user, session_user");
      r.q("reader-read" + i, c, "SELECT count(*) FROM t");
      c.close();
    }
    Connection w = r.open();
    r.q("writer-user", w, "SELECT current_user, session_user");
    r.q("writer-read", w, "SELECT count(*) FROM t");
    w.close();
  }

  /** Three connections at once, read-write, each running {@code sql}; all closed. */
  static void dirtyWriters(Run r, String sql) throws Exception {
    Connection[] cs = new Connection[3];
    for (int i = 0; i < cs.length; i++) {
      cs[i] = r.open();
      r.u("dirty" + i, cs[i], sql);
    }
    for (Connection c : cs) {
      c.close();
    }
  }

  /** The next three readers' and one writer's answer to {@code sql}. */
  static void nextConnections(Run r, String sql) throws Exception {
    for (int i = 0; i < 3; i++) {
      Connection c = r.open();
      c.setReadOnly(true);
      r.q("reader" + i, c, sql);
      c.close();
    }
    Connection w = r.open();
    r.q("writer", w, sql);
    w.close();
  }

  /** Records where {@code c}'s statements see {@code marker} from, and its search_path. */
  static void marker(Run r, String key, Connection c) {
    r.q(key, c, "SELECT v, current_setting('search_path') FROM marker");
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("sql-state")
        .add("set-role-never-reaches-the-next-connection", r -> {
          limitedRole(r);
          SessionStateScenarios.dirtyReaders(r, 3, "SET ROLE conf_limited");
          nextConnectionsIdentity(r);
        })
        .add("session-authorization-never-reaches-the-next-connection", r -> {
          limitedRole(r);
          SessionStateScenarios.dirtyReaders(r, 3, "SET SESSION AUTHORIZATION conf_limited");
          nextConnectionsIdentity(r);
        })
        .add("role-set-by-set-config-never-reaches-the-next-connection", r -> {
          limitedRole(r);
          SessionStateScenarios.dirtyReaders(r, 3, (c, i) -> {
            c.setAutoCommit(false);
            r.q("set" + i, c, "SELECT set_config('role', 'conf_limited', false)");
            c.commit();
          });
          nextConnectionsIdentity(r);
        })
        .add("set-role-in-read-write-work-never-reaches-the-next-connection", r -> {
          limitedRole(r);
          dirtyWriters(r, "SET ROLE conf_limited");
          nextConnectionsIdentity(r);
        })
        .add("set-role-applies-to-read-only-work", r -> {
          limitedRole(r);
          Connection c = r.open();
          r.u("set", c, "SET ROLE conf_limited");
          c.setReadOnly(true);
          r.q("reader-user", c, "SELECT current_user");
          r.q("reader-read", c, "SELECT count(*) FROM t");
          r.u("reset", c, "RESET ROLE");
          r.q("reader-after-reset", c, "SELECT current_user, count(*) FROM t");
        })
        .add("setting-follows-into-read-only-work", r -> {
          SessionStateScenarios.schemas(r);
          Connection c = r.open();
          r.u("set", c, "SET search_path = tenant_b");
          c.setReadOnly(true);
          marker(r, "ro", c);
          c.setAutoCommit(false);
          marker(r, "ro-tx", c);
          c.commit();
          c.setAutoCommit(true);
          c.setReadOnly(false);
          marker(r, "rw", c);
        })
        .add("setting-in-read-only-work-follows-the-connection", r -> {
          SessionStateScenarios.schemas(r);
          Connection c = r.open();
          c.setReadOnly(true);
          r.u("set", c, "SET search_path = tenant_b");
          marker(r, "ro", c);
          marker(r, "ro-again", c);
          c.setReadOnly(false);
          marker(r, "rw", c);
          c.setReadOnly(true);
          r.u("reset", c, "RESET search_path");
          marker(r, "ro-after-reset", c);
          c.setReadOnly(false);
          marker(r, "rw-after-reset", c);
        })
        .add("set-config-follows-the-connection", r -> {
          SessionStateScenarios.schemas(r);
          Connection c = r.open();
          c.setReadOnly(true);
          r.q("set", c, "SELECT set_config('search_path', 'tenant_b', false)");
          marker(r, "ro", c);
          r.call("set-bound", () -> {
            try (PreparedStatement ps =
                c.prepareStatement("SELECT set_config('search_path', ?, false)")) {
              ps.setString(1, "public");
              try (ResultSet rs = ps.executeQuery()) {
                return Run.renderRows(rs);
              }
            }
          });
          marker(r, "ro-bound", c);
          c.setReadOnly(false);
          marker(r, "rw", c);
        })
        .add("multi-statement-setting-follows-the-connection", r -> {
          SessionStateScenarios.schemas(r);
          Connection c = r.open();
          c.setReadOnly(true);
          r.u("set", c, "SELECT 1; SET search_path = tenant_b");
          marker(r, "ro", c);
          c.setReadOnly(false);
          marker(r, "rw", c);
        })
        .add("setting-in-a-transaction-follows-once-committed", r -> {
          SessionStateScenarios.schemas(r);
          Connection c = r.openTransaction();
          r.u("set", c, "SET search_path = tenant_b");
          r.act("commit", c::commit);
          c.setReadOnly(true);
          marker(r, "ro", c);
          c.commit();
          c.setReadOnly(false);
          r.u("set-again", c, "SET search_path = public");
          r.act("rollback", c::rollback);
          c.setReadOnly(true);
          marker(r, "ro-after-rollback", c);
          c.commit();
        })
        .add("setting-never-reaches-the-next-connection", r -> {
          SessionStateScenarios.schemas(r);
          SessionStateScenarios.dirtyReaders(r, 3, "SELECT 1; SET search_path = tenant_b");
          nextConnections(r, "SELECT v, current_setting('search_path') FROM marker");
        })
        .add("read-write-setting-never-reaches-the-next-connection", r -> {
          SessionStateScenarios.schemas(r);
          dirtyWriters(r, "SET search_path = tenant_b");
          nextConnections(r, "SELECT v, current_setting('search_path') FROM marker");
        })
        .add("setting-made-by-a-function-never-reaches-the-next-connection", r -> {
          SessionStateScenarios.schemas(r);
          r.setup("CREATE OR REPLACE FUNCTION conf_tenant_b() RETURNS text LANGUAGE sql"
              + " AS $$ SELECT set_config('search_path', 'tenant_b', false) $$");
          SessionStateScenarios.dirtyReaders(r, 3, "SELECT conf_tenant_b()");
          nextConnections(r, "SELECT v, current_setting('search_path') FROM marker");
        })
        .add("prepared-statement-never-reaches-the-next-connection", r -> {
          SessionStateScenarios.dirtyReaders(r, 3, "PREPARE conf_prepared AS SELECT 1");
          dirtyWriters(r, "PREPARE conf_prepared_rw AS SELECT 1");
          nextConnections(r, "SELECT count(*) FROM pg_prepared_statements WHERE from_sql");
        })
        .add("held-cursor-never-reaches-the-next-connection", r -> {
          SessionStateScenarios.dirtyReaders(r, 3, (c, i) -> {
            c.setAutoCommit(false);
            r.u("declare" + i, c, "DECLARE conf_held CURSOR WITH HOLD FOR SELECT 1");
            c.commit();
          });
          nextConnections(r, "SELECT count(*) FROM pg_cursors");
        })
        .add("temp-table-never-reaches-the-next-connection", r -> {
          dirtyWriters(r, "CREATE TEMP TABLE conf_temp (x int)");
          nextConnections(r,
              "SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema()");
        })
        .add("advisory-lock-never-reaches-the-next-connection", r -> {
          SessionStateScenarios.dirtyReaders(r, 3, (c, i) ->
              r.q("lock" + i, c, "SELECT pg_try_advisory_lock(4343 + " + i + ")"));
          Connection[] ws = new Connection[3];
          for (int i = 0; i < ws.length; i++) {
            ws[i] = r.open();
            r.q("write-lock" + i, ws[i], "SELECT pg_try_advisory_lock(4350 + " + i + ")");
          }
          for (Connection w : ws) {
            w.close();
          }
          r.settled("after-close");
        })
        .add("listen-never-reaches-the-next-connection", r -> {
          dirtyWriters(r, "LISTEN conf_channel_rw");
          nextConnections(r, "SELECT count(*) FROM pg_listening_channels()");
        })
        .add("function-calls-leave-the-next-connection-as-new", r -> {
          SessionStateScenarios.schemas(r);
          r.setup("CREATE OR REPLACE FUNCTION conf_plain(x int) RETURNS int LANGUAGE sql"
              + " AS $$ SELECT x + 1 $$");
          SessionStateScenarios.dirtyReaders(r, 3, (c, i) ->
              r.q("call" + i, c, "SELECT conf_plain(" + i + ")"));
          nextConnections(r, "SELECT v, current_setting('search_path'), current_user FROM marker");
        })
        .add("statement-unwrapped-leaves-the-next-connection-as-new", r -> {
          SessionStateScenarios.schemas(r);
          Connection[] cs = new Connection[3];
          for (int i = 0; i < cs.length; i++) {
            Connection c = r.open();
            cs[i] = c;
            r.act("raw-set" + i, () -> {
              try (Statement st = c.createStatement()) {
                st.unwrap(PgStatement.class).execute("SET search_path = tenant_b");
              }
            });
          }
          for (Connection c : cs) {
            c.close();
          }
          nextConnections(r, "SELECT v, current_setting('search_path') FROM marker");
        });
  }
}
