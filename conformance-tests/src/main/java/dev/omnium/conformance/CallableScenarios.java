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

  static Scenarios.Group group() {
    return new Scenarios.Group("callable")
        .add("function-return", r -> {
          Connection c = r.open();
          try (CallableStatement cs = c.prepareCall("{ ? = call upper(?) }")) {
            cs.registerOutParameter(1, Types.VARCHAR);
            cs.setString(2, "abc");
            r.call("execute", cs::execute);
            r.call("out", () -> cs.getString(1));
          }
        })
        .add("out-parameters", r -> {
          routines(r);
          Connection c = r.open();
          try (CallableStatement cs = c.prepareCall("{ call conf_f(?, ?, ?) }")) {
            cs.setInt(1, 21);
            cs.registerOutParameter(2, Types.INTEGER);
            cs.registerOutParameter(3, Types.VARCHAR);
            r.call("execute", cs::execute);
            r.call("b", () -> cs.getInt(2));
            r.call("c", () -> cs.getString(3));
            r.call("object", () -> cs.getObject(2));
          }
        })
        .add("procedure-inout", r -> {
          routines(r);
          Connection c = r.open();
          try (CallableStatement cs = c.prepareCall("call conf_p(?)")) {
            cs.setInt(1, 41);
            cs.registerOutParameter(1, Types.INTEGER);
            r.call("execute", cs::execute);
            r.call("x", () -> cs.getInt(1));
          }
        })
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
        .add("was-null", r -> {
          routines(r);
          Connection c = r.open();
          try (CallableStatement cs = c.prepareCall("{ ? = call conf_null() }")) {
            cs.registerOutParameter(1, Types.INTEGER);
            r.call("execute", cs::execute);
            r.call("value", () -> cs.getInt(1));
            r.call("was-null", cs::wasNull);
          }
        })
        .add("unregistered-out", r -> {
          routines(r);
          Connection c = r.open();
          try (CallableStatement cs = c.prepareCall("{ call conf_f(?, ?, ?) }")) {
            cs.setInt(1, 1);
            r.call("execute", cs::execute);
            r.call("get", () -> cs.getInt(2));
          }
        })
        .add("callable-reexecute", r -> {
          Connection c = r.open();
          try (CallableStatement cs = c.prepareCall("{ ? = call lower(?) }")) {
            cs.registerOutParameter(1, Types.VARCHAR);
            for (String s : new String[] {"A", "B"}) {
              cs.setString(2, s);
              r.call("execute-" + s, cs::execute);
              r.call("out-" + s, () -> cs.getString(1));
            }
          }
        })
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
