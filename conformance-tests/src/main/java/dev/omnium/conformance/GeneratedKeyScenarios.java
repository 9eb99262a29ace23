package dev.omnium.conformance;

import static dev.omnium.conformance.OnConnection.after;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;

/** Generated keys and RETURNING. */
final class GeneratedKeyScenarios {
  private GeneratedKeyScenarios() { }

  static void serial(Run r) throws Exception {
    r.setup("DROP TABLE IF EXISTS g CASCADE",
        "CREATE TABLE g (id serial PRIMARY KEY, v text, d int DEFAULT 42)");
  }

  static String keys(Statement st) throws Exception {
    try (ResultSet rs = st.getGeneratedKeys()) {
      return Run.renderRows(rs);
    }
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("generated-keys")
        .add("statement-return-generated-keys", after(GeneratedKeyScenarios::serial, (r, c) -> {
          try (Statement st = c.createStatement()) {
            r.call("count", () -> st.executeUpdate("INSERT INTO g (v) VALUES ('a')",
                Statement.RETURN_GENERATED_KEYS));
            r.call("keys", () -> keys(st));
          }
          r.rows("g");
        }))
        .add("prepared-column-names", after(GeneratedKeyScenarios::serial, (r, c) -> {
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO g (v) VALUES (?)",
              new String[] {"id", "d"})) {
            ps.setString(1, "a");
            r.call("count", ps::executeUpdate);
            r.call("keys", () -> keys(ps));
          }
        }))
        .add("prepared-column-indexes", after(GeneratedKeyScenarios::serial, (r, c) -> {
          r.call("prepare", () -> {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO g (v) VALUES ('a')",
                new int[] {1})) {
              ps.executeUpdate();
              return keys(ps);
            }
          });
          r.rows("g");
        }))
        .add("batch-generated-keys", after(GeneratedKeyScenarios::serial, (r, c) -> {
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO g (v) VALUES (?)",
              Statement.RETURN_GENERATED_KEYS)) {
            for (String v : new String[] {"a", "b", "c"}) {
              ps.setString(1, v);
              ps.addBatch();
            }
            r.call("batch", () -> Arrays.toString(ps.executeBatch()));
            r.call("keys", () -> keys(ps));
          }
        }))
        .add("returning-execute-query", after(GeneratedKeyScenarios::serial, (r, c) -> {
          r.q("returning", c, "INSERT INTO g (v) VALUES ('a'), ('b') RETURNING id, v");
          r.rows("g");
        }))
        .add("keys-not-requested", after(GeneratedKeyScenarios::serial, (r, c) -> {
          try (Statement st = c.createStatement()) {
            r.call("count", () -> st.executeUpdate("INSERT INTO g (v) VALUES ('a')"));
            r.call("keys", () -> keys(st));
          }
        }))
        .add("returning-execute", after(GeneratedKeyScenarios::serial, (r, c) -> {
          r.u("execute", c, "INSERT INTO g (v) VALUES ('x') RETURNING d");
          r.rows("g");
        }))
        .add("generated-keys-in-transaction", r -> {
          serial(r);
          Connection c = r.openTransaction();
          try (Statement st = c.createStatement()) {
            r.call("count", () -> st.executeUpdate("INSERT INTO g (v) VALUES ('t')",
                Statement.RETURN_GENERATED_KEYS));
            r.call("keys", () -> keys(st));
          }
          r.act("rollback", c::rollback);
          r.rows("g");
        });
  }
}
