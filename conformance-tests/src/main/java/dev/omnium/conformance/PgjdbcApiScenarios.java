package dev.omnium.conformance;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.PGStatement;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.ServerVersion;
import org.postgresql.largeobject.LargeObject;
import org.postgresql.largeobject.LargeObjectManager;

/**
 * Code that casts to pgjdbc's interfaces instead of calling {@code unwrap} (issue 32): large
 * objects, COPY, notifications, data types, server checks, statement options. Under an application
 * HikariCP pool the cast fails alike on both sides (its proxies are neither); with plain pgjdbc,
 * {@code OmniumDataSource} and the javaagent, the logical objects must be pgjdbc's types.
 */
final class PgjdbcApiScenarios {
  private PgjdbcApiScenarios() { }

  static Scenarios.Group group() {
    return new Scenarios.Group("pgjdbc-api")
        .add("connection-is-pgconnection", r -> {
          Connection c = r.open();
          r.call("is-pgconnection", () -> c instanceof PGConnection);
          r.call("is-base-connection", () -> c instanceof BaseConnection);
        })
        .add("cast-notifications", r -> {
          Connection c = r.open();
          Connection other = r.open();
          r.call("listen", () -> {
            try (Statement st = c.createStatement()) {
              st.execute("LISTEN api_channel");
            }
            return "ok";
          });
          r.u("notify", other, "NOTIFY api_channel, 'cast'");
          r.q("roundtrip", c, "SELECT 1");
          r.call("notifications", () -> {
            PGNotification[] ns = ((PGConnection) c).getNotifications(5000);
            StringBuilder s = new StringBuilder();
            for (PGNotification n : ns == null ? new PGNotification[0] : ns) {
              s.append(n.getName()).append(':').append(n.getParameter()).append(' ');
            }
            return s.toString();
          });
        })
        .add("cast-copy-in", r -> {
          r.table("copied");
          Connection c = r.open();
          r.call("copy", () -> ((PGConnection) c).getCopyAPI()
              .copyIn("COPY copied FROM STDIN", new StringReader("1\ta\n2\tb\n")));
          r.rows("copied");
        })
        .add("cast-large-object", r -> {
          Connection c = r.openTransaction();
          r.call("write-read", () -> {
            LargeObjectManager lom = ((PGConnection) c).getLargeObjectAPI();
            long oid = lom.createLO();
            try (LargeObject lo = lom.open(oid)) {
              lo.write("large".getBytes(StandardCharsets.UTF_8));
              lo.seek(0);
              return new String(lo.read(5), StandardCharsets.UTF_8);
            }
          });
          r.act("rollback", c::rollback);
        })
        .add("cast-base-connection", r -> {
          Connection c = r.open();
          r.call("server-9",
              () -> ((BaseConnection) c).haveMinimumServerVersion(ServerVersion.v9_0));
          r.call("escape", () -> ((BaseConnection) c).escapeString("it's"));
          r.call("std-strings", () -> ((BaseConnection) c).getStandardConformingStrings());
          r.call("sanitiser-off", () -> ((BaseConnection) c).isColumnSanitiserDisabled());
          r.call("state-idle", () -> ((BaseConnection) c).getTransactionState().name());
          c.setAutoCommit(false);
          r.q("select", c, "SELECT 1");
          r.call("state-open", () -> ((BaseConnection) c).getTransactionState().name());
          r.act("commit", c::commit);
          r.call("state-after", () -> ((BaseConnection) c).getTransactionState().name());
        })
        .add("cast-parameter-status", r -> {
          Connection c = r.open();
          r.q("select", c, "SELECT 1");
          r.call("encoding", () -> ((PGConnection) c).getParameterStatus("client_encoding"));
          r.call("escape-literal", () -> ((PGConnection) c).escapeLiteral("a'b"));
          r.call("escape-identifier", () -> ((PGConnection) c).escapeIdentifier("A b"));
        })
        .add("statement-is-pgstatement", r -> {
          r.table("oids");
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            r.call("is-pgstatement", () -> st instanceof PGStatement);
            r.call("insert", () -> st.executeUpdate("INSERT INTO oids VALUES (1, 'a')"));
            r.call("last-oid", () -> ((PGStatement) st).getLastOID());
          }
        })
        .add("prepared-prepare-threshold", r -> {
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("SELECT ?::int")) {
            r.call("default", () -> ((PGStatement) ps).getPrepareThreshold());
            r.act("set", () -> ((PGStatement) ps).setPrepareThreshold(1));
            r.call("threshold", () -> ((PGStatement) ps).getPrepareThreshold());
            for (int i = 0; i < 2; i++) {
              int v = i;
              r.call("run" + i, () -> {
                ps.setInt(1, v);
                try (ResultSet rs = ps.executeQuery()) {
                  return Run.renderRows(rs);
                }
              });
            }
            r.call("server-prepared", () -> ((PGStatement) ps).isUseServerPrepare());
          }
        })
        .add("use-server-prepare-before-execute", r -> {
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("SELECT ?::int");
               Statement st = c.createStatement()) {
            PGStatement pg = ps.unwrap(PGStatement.class);
            r.call("default", pg::isUseServerPrepare);
            r.act("set", () -> pg.setUseServerPrepare(true));
            r.call("before", pg::isUseServerPrepare);
            ps.setInt(1, 1);
            r.call("run", () -> Run.renderRows(ps.executeQuery()));
            r.call("after", pg::isUseServerPrepare);
            r.act("unset", () -> pg.setUseServerPrepare(false));
            r.call("after-unset", pg::isUseServerPrepare);
            r.act("statement-set", () -> st.unwrap(PGStatement.class).setUseServerPrepare(true));
            r.call("statement", () -> st.unwrap(PGStatement.class).isUseServerPrepare());
          }
        });
  }
}
