package dev.omnium.conformance;

import java.io.ByteArrayInputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLXML;
import java.sql.Statement;


/** LOBs, bytea, arrays and the connection's factories (issue 12 defect 6). */
final class TypeScenarios {
  private TypeScenarios() { }

  static void lobs(Run r) throws Exception {
    r.setup("DROP TABLE IF EXISTS lob CASCADE",
        "CREATE TABLE lob (id int PRIMARY KEY, b bytea, t text, o oid, a int[], s text[])");
  }

  static String select(Connection c, String sql) throws Exception {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      return Run.renderRows(rs);
    }
  }

  /** Sets a prepared query's parameters. */
  @FunctionalInterface
  interface Parameters {
    void set(PreparedStatement ps) throws Exception;
  }

  /** @return the rows of {@code sql} prepared with {@code parameters} */
  static String query(Connection c, String sql, Parameters parameters) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      parameters.set(ps);
      try (ResultSet rs = ps.executeQuery()) {
        return Run.renderRows(rs);
      }
    }
  }

  /** Runs a prepared INSERT with {@code parameters}, its count recorded as "insert". */
  static void insert(Run r, Connection c, String sql, Parameters parameters) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      parameters.set(ps);
      r.call("insert", ps::executeUpdate);
    }
  }

  /** Reads one value of the first row of a result. */
  @FunctionalInterface
  interface FirstRow {
    Object read(ResultSet rs) throws Exception;
  }

  /** @return what {@code read} makes of the first row of {@code sql} */
  static Object first(Connection c, String sql, FirstRow read) throws Exception {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return read.read(rs);
    }
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("types")
        .add("bytea-bytes", r -> {
          lobs(r);
          Connection c = r.open();
          insert(r, c, "INSERT INTO lob (id, b) VALUES (1, ?)",
              ps -> ps.setBytes(1, new byte[] {1, 2, 3, (byte) 0xff}));
          r.call("read", () -> select(c, "SELECT b FROM lob"));
          r.rows("lob");
        })
        .add("bytea-stream", r -> {
          lobs(r);
          Connection c = r.open();
          insert(r, c, "INSERT INTO lob (id, b) VALUES (1, ?)",
              ps -> ps.setBinaryStream(1, new ByteArrayInputStream(new byte[] {9, 8, 7}), 3));
          r.call("stream", () -> first(c, "SELECT b FROM lob",
              rs -> rs.getBinaryStream(1).readAllBytes()));
        })
        .add("text-character-stream", r -> {
          lobs(r);
          Connection c = r.open();
          insert(r, c, "INSERT INTO lob (id, t) VALUES (1, ?)",
              ps -> ps.setCharacterStream(1, new StringReader("héllo wörld"), 11));
          r.call("clob", () -> first(c, "SELECT t FROM lob",
              rs -> rs.getString(1) + "/" + rs.getCharacterStream(1).read()));
        })
        .add("create-blob", r -> {
          lobs(r);
          Connection c = r.openTransaction();
          Blob blob = (Blob) r.call("create", c::createBlob);
          if (blob != null) {
            r.call("set", () -> blob.setBytes(1, "blob".getBytes(StandardCharsets.UTF_8)));
            r.call("insert", () -> {
              try (PreparedStatement ps =
                  c.prepareStatement("INSERT INTO lob (id, o) VALUES (1, ?)")) {
                ps.setBlob(1, blob);
                return ps.executeUpdate();
              }
            });
          }
          r.act("commit", c::commit);
        })
        .add("create-clob", r -> {
          Connection c = r.open();
          Clob clob = (Clob) r.call("create", c::createClob);
          if (clob != null) {
            r.call("set", () -> clob.setString(1, "clob"));
          }
        })
        .add("large-object-oid", r -> {
          lobs(r);
          Connection c = r.openTransaction();
          insert(r, c, "INSERT INTO lob (id, o) VALUES (1, ?)", ps -> ps.setBlob(1,
              new ByteArrayInputStream("large".getBytes(StandardCharsets.UTF_8)), 5));
          r.act("commit", c::commit);
          r.call("read", () -> {
            try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT o FROM lob")) {
              rs.next();
              Blob b = rs.getBlob(1);
              return new String(b.getBytes(1, (int) b.length()), StandardCharsets.UTF_8);
            }
          });
          c.commit();
        })
        .add("blob-outside-transaction", r -> {
          lobs(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO lob (id, o) VALUES (1, ?)")) {
            r.act("set", () -> ps.setBlob(1, new ByteArrayInputStream(new byte[] {1}), 1));
          }
          r.rows("lob");
        })
        .add("sqlxml", r -> {
          Connection c = r.open();
          SQLXML x = (SQLXML) r.call("create", c::createSQLXML);
          if (x != null) {
            r.act("set", () -> x.setString("<a>1</a>"));
            r.call("use", () -> query(c, "SELECT ?::xml::text", ps -> ps.setSQLXML(1, x)));
          }
        })
        .add("array-of-int", r -> {
          lobs(r);
          Connection c = r.open();
          Array a = c.createArrayOf("int4", new Integer[] {3, 1, 2});
          insert(r, c, "INSERT INTO lob (id, a) VALUES (1, ?)", ps -> ps.setArray(1, a));
          r.call("base-type", a::getBaseTypeName);
          r.call("read", () -> select(c, "SELECT a FROM lob"));
          r.rows("lob");
        })
        .add("array-get-result-set", r -> {
          Connection c = r.open();
          r.call("rs", () -> first(c, "SELECT ARRAY['x','y','z']::text[]",
              rs -> Run.renderRows(rs.getArray(1).getResultSet())));
        })
        .add("array-created-before-read-only", r -> {
          Connection c = r.open();
          Array a = c.createArrayOf("text", new String[] {"a", "b"});
          c.setReadOnly(true);
          r.call("use", () -> query(c, "SELECT array_length(?, 1), ?::text", ps -> {
            ps.setArray(1, a);
            ps.setArray(2, a);
          }));
          c.setReadOnly(false);
          r.call("use-again", () -> query(c, "SELECT ?::text", ps -> ps.setArray(1, a)));
        })
        .add("primitive-array-set-object", r -> {
          Connection c = r.open();
          r.call("int[]", () -> query(c, "SELECT ?::int[]",
              ps -> ps.setObject(1, new int[] {4, 5})));
        })
        .add("array-of-unknown-type", r -> {
          Connection c = r.open();
          r.call("create", () -> c.createArrayOf("no_such_type", new Object[] {1}));
        })
        .add("text-array-column", r -> {
          lobs(r);
          Connection c = r.open();
          insert(r, c, "INSERT INTO lob (id, s) VALUES (1, ?)",
              ps -> ps.setArray(1, c.createArrayOf("text", new String[] {"q", null, "r,s"})));
          r.call("read", () -> first(c, "SELECT s FROM lob", rs -> rs.getArray(1).getArray()));
        });
  }
}
