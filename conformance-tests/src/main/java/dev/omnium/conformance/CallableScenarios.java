package dev.omnium.conformance;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.Types;

/** CallableStatement OUT and INOUT parameters, as pgjdbc's CallableStmtTest exercises them. */
final class CallableScenarios {
  private CallableScenarios() { }

  static void routines(Run r) throws Exception {
    r.setup("CREATE OR REPLACE FUNCTION conf_f(a int, OUT b int, OUT c text)"
            + " AS $$ SELECT a * 2, 'x' || a $$ LANGUAGE sql",
        "CREATE OR REPLACE PROCEDURE conf_p(INOUT x int) AS $$ BEGIN x := x + 1; END $$"
            + " LANGUAGE plpgsql",
        "CREATE OR REPLACE FUNCTION conf_null() RETURNS int"
            + " AS $$ SELECT NULL::int $$ LANGUAGE sql");
  }

  /** What a scenario does with its prepared call. */
  @FunctionalInterface
  interface CallBody {
    void run(Run r, CallableStatement cs) throws Exception;
  }

  /** {@code sql} prepared on a fresh connection (after {@link #routines} if asked) for a body. */
  static Scenario.Program prepared(boolean withRoutines, String sql, CallBody body) {
    return r -> {
      if (withRoutines) {
        routines(r);
      }
      Connection c = r.open();
      try (CallableStatement cs = c.prepareCall(sql)) {
        body.run(r, cs);
      }
    };
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("callable")
        .add("function-return", prepared(false, "{ ? = call upper(?) }", (r, cs) -> {
          cs.registerOutParameter(1, Types.VARCHAR);
          cs.setString(2, "abc");
          r.call("execute", cs::execute);
          r.call("out", () -> cs.getString(1));
        }))
        .add("out-parameters", prepared(true, "{ call conf_f(?, ?, ?) }", (r, cs) -> {
          cs.setInt(1, 21);
          cs.registerOutParameter(2, Types.INTEGER);
          cs.registerOutParameter(3, Types.VARCHAR);
          r.call("execute", cs::execute);
          r.call("b", () -> cs.getInt(2));
          r.call("c", () -> cs.getString(3));
          r.call("object", () -> cs.getObject(2));
        }))
        .add("procedure-inout", prepared(true, "call conf_p(?)", (r, cs) -> {
          cs.setInt(1, 41);
          cs.registerOutParameter(1, Types.INTEGER);
          r.call("execute", cs::execute);
          r.call("x", () -> cs.getInt(1));
        }))
        .add("out-after-other-statement", r -> {
          routines(r);
          Connection c = r.open();
          c.setReadOnly(true);
          try (CallableStatement cs = c.prepareCall("{ call conf_f(?, ?, ?) }")) {
            cs.setInt(1, 5);
            cs.registerOutParameter(2, Types.INTEGER);
            cs.registerOutParameter(3, Types.VARCHAR);
            r.call("execute", cs::execute);
            r.q("other", c, "SELECT 'other'");
            r.call("b", () -> cs.getInt(2));
            c.setReadOnly(false);
            r.call("c-after-switch", () -> cs.getString(3));
          }
        })
        .add("was-null", prepared(true, "{ ? = call conf_null() }", (r, cs) -> {
          cs.registerOutParameter(1, Types.INTEGER);
          r.call("execute", cs::execute);
          r.call("value", () -> cs.getInt(1));
          r.call("was-null", cs::wasNull);
        }))
        .add("unregistered-out", prepared(true, "{ call conf_f(?, ?, ?) }", (r, cs) -> {
          cs.setInt(1, 1);
          r.call("execute", cs::execute);
          r.call("get", () -> cs.getInt(2));
        }))
        .add("callable-reexecute", prepared(false, "{ ? = call lower(?) }", (r, cs) -> {
          cs.registerOutParameter(1, Types.VARCHAR);
          for (String s : new String[] {"A", "B"}) {
            cs.setString(2, s);
            r.call("execute-" + s, cs::execute);
            r.call("out-" + s, () -> cs.getString(1));
          }
        }))
        .add("callable-in-transaction", r -> {
          routines(r);
          Connection c = r.openTransaction();
          try (CallableStatement cs = c.prepareCall("call conf_p(?)")) {
            cs.setInt(1, 1);
            cs.registerOutParameter(1, Types.INTEGER);
            r.call("execute", cs::execute);
            r.act("commit", c::commit);
            r.call("x-after-commit", () -> cs.getInt(1));
          }
        });
  }
}
