package dev.omnium.conformance;

import static dev.omnium.conformance.OnConnection.opened;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Properties;
import org.postgresql.PGConnection;
import org.postgresql.PGStatement;

/** isValid, abort and close in every order; wrappers (issue 12 defect 9). */
final class LifecycleScenarios {
  private LifecycleScenarios() { }

  static Scenarios.Group group() {
    return new Scenarios.Group("lifecycle")
        .add("new-connection-state", r -> r.state("new", r.open()))
        .add("close-twice", opened((r, c) -> {
          r.act("close1", c::close);
          r.act("close2", c::close);
          r.call("closed", c::isClosed);
        }))
        .add("calls-after-close", opened((r, c) -> {
          c.close();
          r.call("createStatement", () -> c.createStatement() != null);
          r.call("prepare", () -> c.prepareStatement("SELECT 1") != null);
          r.act("setAutoCommit", () -> c.setAutoCommit(false));
          r.act("setReadOnly", () -> c.setReadOnly(true));
          r.act("commit", c::commit);
          r.act("rollback", c::rollback);
          r.call("metadata", () -> c.getMetaData() != null);
          r.state("closed", c);
        }))
        .add("statement-after-connection-close", opened((r, c) -> {
          Statement st = c.createStatement();
          PreparedStatement ps = c.prepareStatement("SELECT 1");
          c.close();
          r.call("st.closed", st::isClosed);
          r.call("ps.closed", ps::isClosed);
          r.call("st.execute", () -> st.execute("SELECT 1"));
          r.call("ps.execute", ps::execute);
        }))
        .add("result-after-connection-close",
            ResultScenarios.resultAfter((c, st) -> c.close(), "rs.closed", "rs.next"))
        .add("is-valid-arguments", opened((r, c) -> {
          r.call("zero", () -> c.isValid(0));
          r.call("negative", () -> c.isValid(-1));
        }))
        .add("is-valid-in-failed-transaction", r -> {
          Connection c = r.openTransaction();
          r.q("fail", c, "SELECT 1/0");
          r.call("valid", () -> c.isValid(5));
          r.q("still-aborted", c, "SELECT 1");
          c.rollback();
        })
        .add("abort-then-calls", opened((r, c) -> {
          r.q("first", c, "SELECT 1");
          r.act("abort", () -> c.abort(Runnable::run));
          r.call("closed", c::isClosed);
          r.call("valid", () -> c.isValid(2));
          r.q("after", c, "SELECT 1");
          r.act("close", c::close);
        }))
        .add("abort-rolls-back", r -> {
          Connection c = r.transactionWithRowA("insert");
          r.act("abort", () -> c.abort(Runnable::run));
          r.call("closed", c::isClosed);
          r.settled("after-abort");
          r.rows("t");
        })
        .add("abort-null-executor", opened((r, c) -> {
          r.act("abort", () -> c.abort(null));
          r.call("closed", c::isClosed);
        }))
        .add("abort-unused", opened((r, c) -> {
          r.act("abort", () -> c.abort(Runnable::run));
          r.call("closed", c::isClosed);
        }))
        .add("close-with-open-transaction-releases-locks", r -> {
          r.setup("DROP TABLE IF EXISTS t CASCADE", "CREATE TABLE t (id int PRIMARY KEY, v text)",
              "INSERT INTO t VALUES (1, 'a')");
          Connection c = r.openTransaction();
          r.q("lock", c, "SELECT v FROM t FOR UPDATE");
          c.close();
          r.settled("after-close");
        })
        .add("network-timeout", opened((r, c) -> {
          r.call("default", c::getNetworkTimeout);
          r.act("set", () -> c.setNetworkTimeout(Runnable::run, 30000));
          r.call("get", c::getNetworkTimeout);
          r.act("negative", () -> c.setNetworkTimeout(Runnable::run, -1));
          r.q("works", c, "SELECT 1");
        }))
        .add("unwrap-connection", opened((r, c) -> {
          r.call("is-wrapper", () -> c.isWrapperFor(PGConnection.class));
          r.call("unwrap", () -> c.unwrap(PGConnection.class).getBackendPID() > 0);
          r.call("is-wrapper-string", () -> c.isWrapperFor(String.class));
          r.call("unwrap-string", () -> c.unwrap(String.class));
          r.call("timezone-status",
              () -> c.unwrap(PGConnection.class).getParameterStatus("client_encoding"));
        }))
        .add("unwrap-statement-before-execute", opened((r, c) -> {
          try (Statement st = c.createStatement()) {
            r.call("is-wrapper", () -> st.isWrapperFor(PGStatement.class));
            r.call("unwrap", () -> st.unwrap(PGStatement.class) != null);
            st.execute("SELECT 1");
            r.call("is-wrapper-after", () -> st.isWrapperFor(PGStatement.class));
          }
          try (PreparedStatement ps = c.prepareStatement("SELECT 1")) {
            r.call("ps-is-wrapper", () -> ps.isWrapperFor(PGStatement.class));
          }
        }))
        .add("statement-close-idempotent", opened((r, c) -> {
          Statement st = c.createStatement();
          r.act("close1", st::close);
          r.act("close2", st::close);
          r.call("closed", st::isClosed);
          r.call("execute", () -> st.execute("SELECT 1"));
        }))
        .add("client-info", opened((r, c) -> {
          r.call("initial", () -> c.getClientInfo("ApplicationName"));
          r.act("set", () -> c.setClientInfo("ApplicationName", "conf-client"));
          r.call("get", () -> c.getClientInfo("ApplicationName"));
          r.q("server", c, "SELECT current_setting('application_name')");
          r.act("unknown", () -> c.setClientInfo("NoSuchKey", "x"));
          r.call("warnings", () -> c.getWarnings() == null ? "none" : "warned");
        }))
        .add("client-info-after-sql", opened((r, c) -> {
          r.u("set", c, "SET application_name = 'conf-by-sql'");
          r.call("get", () -> c.getClientInfo("ApplicationName"));
          r.call("all", () -> c.getClientInfo().getProperty("ApplicationName"));
        }))
        .add("client-info-empty-properties", opened((r, c) -> {
          r.act("set", () -> c.setClientInfo("ApplicationName", "conf-client"));
          r.act("clear", () -> c.setClientInfo(new Properties()));
          r.call("get", () -> c.getClientInfo("ApplicationName"));
          r.q("server", c, "SELECT current_setting('application_name')");
        }));
  }
}
