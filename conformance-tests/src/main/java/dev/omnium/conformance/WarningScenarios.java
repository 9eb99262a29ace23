package dev.omnium.conformance;

import java.sql.Connection;
import java.sql.SQLWarning;
import java.sql.Statement;

/** Warnings on statements and connections (issue 12 defect 7: chains must not become cycles). */
final class WarningScenarios {
  private WarningScenarios() { }

  static final String NOTICE = "DO $$ BEGIN RAISE NOTICE 'n1'; RAISE WARNING 'w2'; END $$";

  /** Counts a chain, stopping at 50 so that a cycle shows as 50 instead of hanging. */
  static int length(SQLWarning w) {
    int n = 0;
    for (SQLWarning x = w; x != null && n < 50; x = x.getNextWarning()) {
      n++;
    }
    return n;
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("warnings")
        .add("statement-notices", r -> {
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.execute(NOTICE);
            r.call("warnings", st::getWarnings);
            st.clearWarnings();
            r.call("cleared", st::getWarnings);
          }
        })
        .add("connection-warnings", r -> {
          Connection c = r.open();
          r.call("initial", c::getWarnings);
          try (Statement st = c.createStatement()) {
            st.execute(NOTICE);
          }
          r.call("after-statement", () -> length(c.getWarnings()));
          c.clearWarnings();
          r.call("cleared", c::getWarnings);
        })
        .add("get-warnings-three-times", r -> {
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.execute(NOTICE);
            r.call("c1", () -> length(c.getWarnings()));
            r.call("c2", () -> length(c.getWarnings()));
            r.call("c3", () -> length(c.getWarnings()));
            r.call("s1", () -> length(st.getWarnings()));
            r.call("s2", () -> length(st.getWarnings()));
            r.call("s3", () -> length(st.getWarnings()));
          }
        })
        .add("warnings-reset-per-execute", r -> {
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            st.execute(NOTICE);
            st.execute("SELECT 1");
            r.call("after-second", () -> length(st.getWarnings()));
          }
        })
        .add("warnings-after-close", r -> {
          Connection c = r.open();
          Statement st = c.createStatement();
          st.close();
          r.call("statement", st::getWarnings);
          c.close();
          r.call("connection", c::getWarnings);
        })
        .add("read-only-notices", r -> {
          Connection c = r.open();
          c.setReadOnly(true);
          try (Statement st = c.createStatement()) {
            st.execute(NOTICE);
            r.call("warnings", st::getWarnings);
            r.call("length", () -> length(st.getWarnings()));
          }
        })
        .add("result-set-warnings", r -> {
          Connection c = r.open();
          try (Statement st = c.createStatement()) {
            r.call("rs", () -> st.executeQuery("SELECT 1").getWarnings());
          }
        })
        .add("server-warning-state", r -> {
          Connection c = r.openTransaction();
          try (Statement st = c.createStatement()) {
            st.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
            st.execute("BEGIN");
            r.call("warnings", st::getWarnings);
          }
          c.rollback();
        });
  }
}
