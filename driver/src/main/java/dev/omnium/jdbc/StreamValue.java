package dev.omnium.jdbc;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * A stream or reader parameter, read where pgjdbc reads it, and as often: once, at the setter,
 * for every setter but a binary stream with a length, which pgjdbc reads as it sends it, at each
 * execute and for each batch row (a second read of a used stream fails there, as with pgjdbc).
 * Every physical statement gets a fresh stream over what was read: a replay of the same execute
 * on another session (a retry) sends the same bytes, and so do a re-execute, each batch row and
 * an execute after {@code getMetaData()} of a value read at the setter; a stream closed right
 * after its setter has been read already, as with pgjdbc. A statement that only describes
 * ({@code getMetaData()}, {@code toString()}) gets a stream read at execute as it is: pgjdbc
 * does not read it then.
 *
 * <p>It is an {@link InputStream} (or, for readers, holds a {@link Reader}'s characters) only so
 * that the parameter log records it like the value it stands for; it is never read itself.
 */
final class StreamValue extends InputStream {
  /** Read at each execute ({@link #length} bytes), or null: read at the setter. */
  private final InputStream source;
  private final long length;
  /** The execute (and batch row) the bytes were read for, when read at execute. */
  private long readFor = -1;
  private byte[] bytes;
  private char[] chars;
  private int count;
  /** The source failed after {@link #count} bytes: every execute fails as the first did. */
  private IOException failure;

  private StreamValue(InputStream source, long length) {
    this.source = source;
    this.length = length;
  }

  /**
   * {@code setBinaryStream(i, in, length)}: read at the first execute, {@code length} bytes, as
   * pgjdbc sends them. pgjdbc checks the length at the setter.
   *
   * @return null for null (pgjdbc's NULL), else the value to record
   * @throws SQLException 22003 above {@link Integer#MAX_VALUE}, 22023 when negative, as pgjdbc
   */
  static InputStream atExecute(InputStream in, long length) throws SQLException {
    if (in == null) return null;
    if (length > Integer.MAX_VALUE) {
      throw new PSQLException("Object is too large to send over the protocol.",
          PSQLState.NUMERIC_CONSTANT_OUT_OF_RANGE);
    }
    if (length < 0) throw PgjdbcErrors.invalidParameter("Invalid stream length " + length + ".");
    return new StreamValue(in, length);
  }

  /**
   * {@code setBinaryStream(i, in)} and a text stream given to {@code setObject}: pgjdbc reads all
   * of it at the setter.
   *
   * @throws SQLException 58030 when the stream fails, as pgjdbc
   */
  static InputStream atSetter(InputStream in) throws SQLException {
    if (in == null) return null;
    StreamValue v = new StreamValue(null, -1);
    try {
      v.bytes = in.readAllBytes();
    } catch (IOException e) {
      throw new PSQLException("An I/O error occurred while sending to the backend.",
          PSQLState.IO_ERROR, e);
    }
    v.count = v.bytes.length;
    return v;
  }

  /**
   * {@code setAsciiStream} and {@code setUnicodeStream}: pgjdbc decodes {@code length}
   * characters at the setter. The characters are kept as bytes that decode to exactly them
   * again: UTF-8, or for ASCII each character's byte (an undecodable byte became U+FFFD, which an
   * undecodable byte gives again).
   *
   * @throws SQLException 22023 for a negative length, XX000 when the stream fails, as pgjdbc
   */
  static InputStream decodedAtSetter(InputStream in, int length, Charset charset)
      throws SQLException {
    if (in == null) return null;
    if (length < 0) throw PgjdbcErrors.invalidParameter("Invalid stream length " + length + ".");
    String s;
    try {
      s = read(new InputStreamReader(in, charset), length);
    } catch (IOException e) {
      throw new PSQLException("Provided InputStream failed.", PSQLState.UNEXPECTED_ERROR, e);
    }
    StreamValue v = new StreamValue(null, -1);
    if (charset.equals(StandardCharsets.US_ASCII)) {
      v.bytes = new byte[s.length()];
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        v.bytes[i] = (byte) (c < 0x80 ? c : 0x80);
      }
    } else {
      v.bytes = s.getBytes(charset);
    }
    v.count = v.bytes.length;
    return v;
  }

  /**
   * {@code setCharacterStream(i, reader[, length])}: pgjdbc reads the characters at the setter.
   *
   * @param length characters to read, {@link Integer#MAX_VALUE} for all
   * @param failure pgjdbc's error when the reader fails (its SQLState depends on the setter)
   * @throws SQLException 22023 for a negative length, else {@code failure} when the reader fails
   */
  static Reader charsAtSetter(Reader in, int length, PSQLState failure) throws SQLException {
    if (in == null) return null;
    if (length < 0) throw PgjdbcErrors.invalidParameter("Invalid stream length " + length + ".");
    StreamValue v = new StreamValue(null, -1);
    try {
      v.chars = read(in, length).toCharArray();
    } catch (IOException e) {
      throw new PSQLException(failure == PSQLState.IO_ERROR
          ? "An I/O error occurred while sending to the backend." : "Provided Reader failed.",
          failure, e);
    }
    return new Chars(v);
  }

  private static String read(Reader in, int length) throws IOException {
    StringBuilder sb = new StringBuilder(Math.min(length, 1024));
    char[] buf = new char[Math.min(length, 1024)];
    while (sb.length() < length) {
      int n = in.read(buf, 0, Math.min(buf.length, length - sb.length()));
      if (n < 0) break;
      sb.append(buf, 0, n);
    }
    return sb.toString();
  }

  /**
   * The value for a physical statement: what {@code o} recorded, a fresh copy of a read one.
   *
   * @param execute which execute (and batch row) applies it: a value read at execute is read
   *     again for another, and replayed for the same one; negative when only describing
   */
  static InputStream stream(Object o, long execute) {
    if (!(o instanceof StreamValue)) return (InputStream) o;
    StreamValue v = (StreamValue) o;
    if (v.source != null) {
      if (execute < 0) return v.source; // pgjdbc reads it at execute only
      if (v.readFor != execute) v.readSource(execute);
    }
    InputStream copy = new ByteArrayInputStream(v.bytes, 0, v.count);
    return v.failure == null ? copy : new Failing(copy, v.failure);
  }

  /** The reader for a physical statement: a fresh one over the characters read once. */
  static Reader reader(Object o) {
    return o instanceof Chars ? new StringReader(new String(((Chars) o).value.chars)) : (Reader) o;
  }

  /** Whether applying {@code o} again gives the same value: anything but a stream of its own. */
  static boolean replayable(Object o) {
    return !(o instanceof InputStream || o instanceof Reader)
        || o instanceof StreamValue || o instanceof Chars;
  }

  /** Reads the {@code length} bytes pgjdbc would send; a failure is kept with what came before. */
  private void readSource(long execute) {
    InputStream in = source;
    readFor = execute;
    failure = null;
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(length, 8192));
    byte[] buf = new byte[(int) Math.min(Math.max(length, 1), 8192)];
    long left = length;
    try {
      while (left > 0) {
        int n = in.read(buf, 0, (int) Math.min(buf.length, left));
        if (n < 0) break; // short: pgjdbc's own premature-end error follows at execute
        out.write(buf, 0, n);
        left -= n;
      }
    } catch (IOException e) {
      failure = e;
    }
    bytes = out.toByteArray();
    count = bytes.length;
  }

  /** Never read itself: the parameter log hands out {@link #stream copies}. */
  @Override
  public int read() {
    throw new IllegalStateException("omnium: a recorded stream parameter is read through copies");
  }

  @Override
  public String toString() {
    return "StreamValue[" + (source != null ? "read at execute" : count + " bytes") + "]";
  }

  /** A reader parameter's characters, read once. */
  static final class Chars extends Reader {
    final StreamValue value;

    Chars(StreamValue value) {
      this.value = value;
    }

    @Override
    public int read(char[] cbuf, int off, int len) {
      throw new IllegalStateException("omnium: a recorded reader parameter is read through copies");
    }

    @Override
    public void close() { }
  }

  /** The bytes the source gave, then its failure: pgjdbc meets it where it met it first. */
  private static final class Failing extends InputStream {
    private final InputStream head;
    private final IOException failure;

    Failing(InputStream head, IOException failure) {
      this.head = head;
      this.failure = failure;
    }

    @Override
    public int read() throws IOException {
      int b = head.read();
      if (b < 0) throw failure;
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = head.read(b, off, len);
      if (n < 0) throw failure;
      return n;
    }
  }
}
