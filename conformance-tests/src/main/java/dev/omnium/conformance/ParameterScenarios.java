package dev.omnium.conformance;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.Arrays;
import java.util.GregorianCalendar;
import java.util.TimeZone;

/**
 * Prepared statement parameters as pgjdbc keeps them (issue 32): streams and readers read once,
 * where pgjdbc reads them, so a re-execute, a batch row, an execute after {@code getMetaData()}
 * and a stream closed after its setter write what pgjdbc writes; large objects made once, at the
 * setter; {@code toString()} and parameter metadata with the values and types set so far.
 */
final class ParameterScenarios {
  private ParameterScenarios() { }

  private static final int SIZE = 1000;

  static void streams(Run r) throws Exception {
    r.setup("DROP TABLE IF EXISTS st CASCADE",
        "CREATE TABLE st (id int PRIMARY KEY, b bytea, t text, o oid)");
  }

  static byte[] bytes() {
    byte[] b = new byte[SIZE];
    Arrays.fill(b, (byte) 7);
    return b;
  }

  static String text() {
    return "x".repeat(SIZE);
  }

  /** What the rows hold: their lengths, not their bytes. */
  static void lengths(Run r, Connection c) {
    r.q("lengths", c, "SELECT id, length(b), length(t), o IS NOT NULL FROM st ORDER BY id");
  }

  /** Runs the prepared insert for ids 1 and 2 with the same parameters set once. */
  static void twice(Run r, PreparedStatement ps) {
    for (int id = 1; id <= 2; id++) {
      int v = id;
      r.call("execute" + id, () -> {
        ps.setInt(1, v);
        return ps.executeUpdate();
      });
    }
  }

  /** A statement's own rendering, after a pool proxy's "… wrapping " prefix when there is one. */
  static String rendering(Statement s) {
    String t = s.toString();
    int w = t.indexOf(" wrapping ");
    return w < 0 ? t : t.substring(w + " wrapping ".length());
  }

  /** A stream whose reads fail once it is closed, like a file's. */
  static final class ClosingStream extends InputStream {
    private final ByteArrayInputStream in;
    private boolean closed;

    ClosingStream(byte[] b) {
      in = new ByteArrayInputStream(b);
    }

    @Override
    public int read() throws IOException {
      if (closed) throw new IOException("Stream closed");
      return in.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (closed) throw new IOException("Stream closed");
      return in.read(b, off, len);
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("parameters")
        .add("binary-stream-reexecute", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, b) VALUES (?, ?)")) {
            ps.setBinaryStream(2, new ByteArrayInputStream(bytes()));
            twice(r, ps);
          }
          lengths(r, c);
        })
        .add("binary-stream-length-reexecute", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, b) VALUES (?, ?)")) {
            ps.setBinaryStream(2, new ByteArrayInputStream(bytes()), SIZE);
            twice(r, ps);
          }
          lengths(r, c);
        })
        .add("binary-stream-after-metadata", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, b) VALUES (?, ?)")) {
            ps.setInt(1, 1);
            ps.setBinaryStream(2, new ByteArrayInputStream(bytes()));
            r.call("metadata", () -> ps.getParameterMetaData().getParameterCount());
            r.call("execute", ps::executeUpdate);
          }
          lengths(r, c);
        })
        .add("binary-stream-length-after-metadata", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, b) VALUES (?, ?)")) {
            ps.setInt(1, 1);
            ps.setBinaryStream(2, new ByteArrayInputStream(bytes()), SIZE);
            r.call("metadata", () -> ps.getParameterMetaData().getParameterCount());
            r.call("execute", ps::executeUpdate);
          }
          lengths(r, c);
        })
        .add("binary-stream-batch-rows", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, b) VALUES (?, ?)")) {
            ps.setBinaryStream(2, new ByteArrayInputStream(bytes()));
            for (int id = 1; id <= 3; id++) {
              ps.setInt(1, id);
              ps.addBatch();
            }
            r.call("batch", ps::executeBatch);
          }
          lengths(r, c);
        })
        .add("binary-stream-closed-after-setter", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, b) VALUES (1, ?)")) {
            InputStream in = new ClosingStream(bytes());
            ps.setBinaryStream(1, in);
            in.close();
            r.call("execute", ps::executeUpdate);
          }
          lengths(r, c);
        })
        .add("character-stream-reexecute", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, t) VALUES (?, ?)")) {
            ps.setCharacterStream(2, new StringReader(text()));
            twice(r, ps);
          }
          lengths(r, c);
        })
        .add("character-stream-length-reexecute", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, t) VALUES (?, ?)")) {
            ps.setCharacterStream(2, new StringReader(text()), SIZE);
            twice(r, ps);
          }
          lengths(r, c);
        })
        .add("ascii-stream-reexecute", r -> {
          streams(r);
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, t) VALUES (?, ?)")) {
            ps.setAsciiStream(2, new ByteArrayInputStream(text().getBytes(
                StandardCharsets.US_ASCII)), SIZE);
            twice(r, ps);
          }
          lengths(r, c);
        })
        .add("blob-reexecute-one-object", r -> {
          streams(r);
          Connection c = r.openTransaction();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, o) VALUES (?, ?)")) {
            ps.setBlob(2, new ByteArrayInputStream(bytes()), SIZE);
            twice(r, ps);
          }
          r.q("objects", c, "SELECT count(DISTINCT o), min(length(lo_get(o))),"
              + " max(length(lo_get(o))) FROM st");
          r.act("rollback", c::rollback);
        })
        .add("to-string-values", r -> {
          Connection c = r.open();
          r.q("warm", c, "SELECT 1");
          try (PreparedStatement ps = c.prepareStatement("SELECT ?, ?")) {
            r.call("unset", () -> rendering(ps));
            ps.setBytes(1, new byte[] {0, 1, 2});
            r.call("half", () -> rendering(ps));
            ps.setString(2, "it's");
            r.call("set", () -> rendering(ps));
            ps.setBinaryStream(1, new ByteArrayInputStream(new byte[] {9}), 1);
            r.call("stream", () -> rendering(ps));
            r.call("run", () -> Run.renderRows(ps.executeQuery()));
          }
        })
        .add("to-string-batch", r -> {
          streams(r);
          Connection c = r.open();
          r.q("warm", c, "SELECT 1");
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO st (id, t) VALUES (?, ?)")) {
            for (int id = 1; id <= 2; id++) {
              ps.setInt(1, id);
              ps.setString(2, "line" + id);
              ps.addBatch();
            }
            r.call("batch", () -> rendering(ps));
            r.call("run", ps::executeBatch);
          }
          lengths(r, c);
        })
        .add("parameter-count-without-standard-strings", r -> {
          Connection c = r.open();
          r.u("off", c, "SET standard_conforming_strings = off");
          try (PreparedStatement ps = c.prepareStatement("SELECT 'it\\'s', ?::text")) {
            r.act("set", () -> ps.setString(1, "x"));
            r.call("run", () -> Run.renderRows(ps.executeQuery()));
            r.act("second-index", () -> ps.setString(2, "y"));
          }
          r.u("on", c, "SET standard_conforming_strings = on");
        })
        .add("timestamp-zone-of-the-setter", r -> {
          Connection c = r.open();
          TimeZone before = TimeZone.getDefault();
          Timestamp ts = Timestamp.valueOf("2016-01-31 00:00:00");
          try (PreparedStatement ps = c.prepareStatement("SELECT ?::timestamp::text,"
              + " ?::timestamp::text, (?::timestamp - ?::timestamp)::text")) {
            // pgjdbc converts with the default zone of the setter's moment (cached per execute)
            TimeZone.setDefault(TimeZone.getTimeZone("GMT+8:00"));
            ps.setTimestamp(1, ts);
            ps.setTimestamp(3, ts);
            TimeZone.setDefault(TimeZone.getTimeZone("GMT-2:00"));
            ps.setTimestamp(2, ts);
            ps.setTimestamp(4, ts, new GregorianCalendar(TimeZone.getTimeZone("GMT-2:00")));
            r.call("run", () -> Run.renderRows(ps.executeQuery()));
            ps.setTimestamp(2, ts); // after the execute: the zone now
            r.call("again", () -> Run.renderRows(ps.executeQuery()));
          } finally {
            TimeZone.setDefault(before);
          }
        })
        .add("parameter-metadata-bound-types", r -> {
          Connection c = r.open();
          try (PreparedStatement ps = c.prepareStatement("SELECT ?")) {
            r.call("unset", () -> ps.getParameterMetaData().getParameterTypeName(1));
            ps.setDate(1, Date.valueOf("2020-01-02"));
            r.call("date", () -> ps.getParameterMetaData().getParameterTypeName(1));
            ps.setInt(1, 5);
            r.call("int", () -> ps.getParameterMetaData().getParameterTypeName(1));
          }
        });
  }
}
