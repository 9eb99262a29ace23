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

  static Scenarios.Group group() {
    return new Scenarios.Group("types")
        .add("bytea-bytes", r -> {
          lobs(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO lob (id, b) VALUES (1, ?)")) {
            ps.setBytes(1, new byte[] {1, 2, 3, (byte) 0xff});
            r.call("insert", ps::executeUpdate);
          }
          r.call("read", () -> select(c, "SELECT b FROM lob"));
          r.rows("lob");
        })
        .add("bytea-stream", r -> {
          lobs(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO lob (id, b) VALUES (1, ?)")) {
            ps.setBinaryStream(1, new ByteArrayInputStream(new byte[] {9, 8, 7}), 3);
            r.call("insert", ps::executeUpdate);
          }
          r.call("stream", () -> {
            try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT b FROM lob")) {
              rs.next();
              return rs.getBinaryStream(1).readAllBytes();
            }
          });
        })
        .add("text-character-stream", r -> {
          lobs(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO lob (id, t) VALUES (1, ?)")) {
            ps.setCharacterStream(1, new StringReader("héllo wörld"), 11);
            r.call("insert", ps::executeUpdate);
          }
          r.call("clob", () -> {
            try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT t FROM lob")) {
              rs.next();
              return rs.getString(1) + "/" + rs.getCharacterStream(1).read();
            }
          });
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
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO lob (id, o) VALUES (1, ?)")) {
            ps.setBlob(1, new ByteArrayInputStream("large".getBytes(StandardCharsets.UTF_8)), 5);
            r.call("insert", ps::executeUpdate);
          }
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
            r.call("use", () -> {
              try (PreparedStatement ps = c.prepareStatement("SELECT ?::xml::text")) {
                ps.setSQLXML(1, x);
                try (ResultSet rs = ps.executeQuery()) {
                  return Run.renderRows(rs);
                }
              }
            });
          }
        })
        .add("array-of-int", r -> {
          lobs(r);
          Connection c = r.open();
          Array a = c.createArrayOf("int4", new Integer[] {3, 1, 2});
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO lob (id, a) VALUES (1, ?)")) {
            ps.setArray(1, a);
            r.call("insert", ps::executeUpdate);
          }
          r.call("base-type", a::getBaseTypeName);
          r.call("read", () -> select(c, "SELECT a FROM lob"));
          r.rows("lob");
        })
        .add("array-get-result-set", r -> {
          Connection c = r.open();
          r.call("rs", () -> {
            try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT ARRAY['x','y','z']::text[]")) {
              rs.next();
              return Run.renderRows(rs.getArray(1).getResultSet());
            }
          });
        })
        .add("array-created-before-read-only", r -> {
          Connection c = r.open();
          Array a = c.createArrayOf("text", new String[] {"a", "b"});
          c.setReadOnly(true);
          r.call("use", () -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT array_length(?, 1), ?::text")) {
              ps.setArray(1, a);
              ps.setArray(2, a);
              try (ResultSet rs = ps.executeQuery()) {
                return Run.renderRows(rs);
              }
            }
          });
          c.setReadOnly(false);
          r.call("use-again", () -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT ?::text")) {
              ps.setArray(1, a);
              try (ResultSet rs = ps.executeQuery()) {
                return Run.renderRows(rs);
              }
            }
          });
        })
        .add("primitive-array-set-object", r -> {
          Connection c = r.open();
          r.call("int[]", () -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT ?::int[]")) {
              ps.setObject(1, new int[] {4, 5});
              try (ResultSet rs = ps.executeQuery()) {
                return Run.renderRows(rs);
              }
            }
          });
        })
        .add("array-of-unknown-type", r -> {
          Connection c = r.open();
          r.call("create", () -> c.createArrayOf("no_such_type", new Object[] {1}));
        })
        .add("text-array-column", r -> {
          lobs(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO lob (id, s) VALUES (1, ?)")) {
            ps.setArray(1, c.createArrayOf("text", new String[] {"q", null, "r,s"}));
            r.call("insert", ps::executeUpdate);
          }
          r.call("read", () -> {
            try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT s FROM lob")) {
              rs.next();
              return rs.getArray(1).getArray();
            }
          });
        });
  }
}
