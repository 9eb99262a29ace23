package dev.omnium.conformance;

import java.io.StringReader;
import java.sql.Connection;
import java.sql.Savepoint;
import java.sql.Statement;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

/**
 * A connection's primary session used, then idle with its warnings cleared, as an application
 * pool leaves a connection at each return; then read-only units of work, or anything that uses
 * the session again while auto-commit is off (pgjdbc objects of it handed out earlier included).
 */
final class KeptPrimaryScenarios {
  private KeptPrimaryScenarios() { }

  static Scenarios.Group group() {
    return new Scenarios.Group("kept-primary")
        .add("returned-then-transaction", r -> {
          r.table("t");
          Connection c = returned(r);
          writeWithAutoCommitOff(r, c);
          r.act("rollback", c::rollback);
          r.rows("t");
        })
        .add("returned-then-read-only-units", r -> {
          r.table("t");
          Connection c = returned(r);
          for (int i = 1; i <= 2; i++) {
            int n = i;
            r.act("read-only" + n, () -> c.setReadOnly(true));
            r.act("autocommit-off" + n, () -> c.setAutoCommit(false));
            r.q("count" + n, c, "SELECT count(*) FROM t");
            r.act("commit" + n, c::commit);
            r.act("autocommit-on" + n, () -> c.setAutoCommit(true));
            r.act("read-write" + n, () -> c.setReadOnly(false));
            r.act("returned" + n, c::clearWarnings);
          }
          writeWithAutoCommitOff(r, c);
          r.act("commit", c::commit);
          r.rows("t");
          r.state("end", c);
        })
        .add("returned-then-isvalid", r -> {
          Connection c = returned(r);
          r.act("autocommit-off", () -> c.setAutoCommit(false));
          r.call("valid", () -> c.isValid(5));
          r.activity("after-isvalid");
          r.act("rollback", c::rollback);
          r.activity("after-rollback");
        })
        .add("returned-then-schema", r -> {
          r.setup("CREATE SCHEMA IF NOT EXISTS kept");
          Connection c = returned(r);
          r.act("autocommit-off", () -> c.setAutoCommit(false));
          r.act("schema", () -> c.setSchema("kept"));
          r.activity("after-schema");
          r.act("commit", c::commit);
          r.call("schema", c::getSchema);
        })
        .add("returned-then-savepoint", r -> {
          r.table("t");
          Connection c = returned(r);
          r.act("autocommit-off", () -> c.setAutoCommit(false));
          Savepoint[] sp = new Savepoint[1];
          r.act("savepoint", () -> sp[0] = c.setSavepoint());
          r.activity("after-savepoint");
          r.u("insert", c, "INSERT INTO t VALUES (1, 'a')");
          r.act("rollback-to", () -> c.rollback(sp[0]));
          r.act("commit", c::commit);
          r.rows("t");
        })
        .add("returned-then-warnings", r -> {
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.execute(WarningScenarios.NOTICE);
          }
          r.call("before", () -> WarningScenarios.length(c.getWarnings()));
          r.act("returned", c::clearWarnings);
          r.act("autocommit-off", () -> c.setAutoCommit(false));
          r.act("commit", c::commit);
          r.act("autocommit-on", () -> c.setAutoCommit(true));
          r.call("still-cleared", c::getWarnings);
          try (Statement st = c.createStatement()) {
            st.execute(WarningScenarios.NOTICE);
          }
          r.call("after-notice", () -> WarningScenarios.length(c.getWarnings()));
          r.act("returned-again", c::clearWarnings);
          r.call("cleared-again", c::getWarnings);
        })
        .add("returned-then-copy", r -> {
          r.table("t");
          Connection c = r.open();
          CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
          r.q("first", c, "SELECT 1");
          r.act("returned", c::clearWarnings);
          r.act("autocommit-off", () -> c.setAutoCommit(false));
          r.call("copy", () -> copy.copyIn("COPY t FROM STDIN", new StringReader("1\ta\n")));
          r.activity("after-copy");
          r.act("rollback", c::rollback);
          r.rows("t");
        })
        .add("returned-then-closed-with-autocommit-off", r -> {
          r.table("t");
          Connection c = returned(r);
          r.act("autocommit-off", () -> c.setAutoCommit(false));
          r.act("close", c::close);
          r.settled("after-close");
          r.rows("t");
        });
  }

  /** Auto-commit off, then row 1 into {@code t}: a transaction begins with the statement. */
  private static void writeWithAutoCommitOff(Run r, Connection c) throws Exception {
    r.act("autocommit-off", () -> c.setAutoCommit(false));
    r.activity("before-statement");
    r.u("insert", c, "INSERT INTO t VALUES (1, 'a')");
    r.activity("in-transaction");
  }

  /**
   * A new connection that ran a query on its primary session, then had its warnings cleared, as
   * an application pool does when the connection comes back.
   */
  private static Connection returned(Run r) throws Exception {
    Connection c = r.open();
    r.q("first", c, "SELECT 1");
    r.act("returned", c::clearWarnings);
    return c;
  }
}
