package dev.omnium.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.Charset;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.SQLException;
import org.postgresql.core.BaseConnection;
import org.postgresql.largeobject.LargeObject;
import org.postgresql.largeobject.LargeObjectManager;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * The large objects pgjdbc creates in {@code setBlob} and {@code setClob} (and {@code setObject}
 * with such values): created once, at the setter, on the session of the current unit of work, as
 * pgjdbc's statement creates them on its connection; the statement then records the object's oid
 * ({@code setLong}), as pgjdbc does, so a re-execute or a replay sends the same object. The loops
 * are pgjdbc 42.7's ({@code PgPreparedStatement.createBlob} and {@code setClob}).
 */
final class LargeObjects {
  private LargeObjects() { }

  /** {@code setBlob(i, blob)}: its stream, as long as it says it is (all of it for -1). */
  static long of(BaseConnection c, Blob x) throws SQLException {
    try (InputStream in = x.getBinaryStream()) {
      long length = x.length();
      return of(c, in, length < 0 ? Long.MAX_VALUE : length);
    } catch (IOException e) {
      throw new PSQLException("Unexpected error when closing Blob binary stream",
          PSQLState.UNEXPECTED_ERROR, e);
    }
  }

  /** {@code setBlob(i, in, length)}: at most {@code length} bytes of {@code in}. */
  static long of(BaseConnection c, InputStream in, long length) throws SQLException {
    LargeObjectManager lom = c.getLargeObjectAPI();
    long oid = lom.createLO();
    LargeObject lob = lom.open(oid);
    try (OutputStream out = lob.getOutputStream()) {
      byte[] buf = new byte[(int) Math.min(length, 8192)];
      int n;
      while (length > 0 && (n = in.read(buf, 0, (int) Math.min(buf.length, length))) >= 0) {
        length -= n;
        out.write(buf, 0, n);
      }
    } catch (IOException e) {
      throw new PSQLException("Unexpected error writing large object to database.",
          PSQLState.UNEXPECTED_ERROR, e);
    }
    return oid;
  }

  /** {@code setClob(i, clob)}: its characters in the session's encoding. */
  static long of(BaseConnection c, Clob x) throws SQLException {
    Reader in = x.getCharacterStream();
    long length = x.length();
    int max = length < 0 ? Integer.MAX_VALUE : (int) length;
    LargeObjectManager lom = c.getLargeObjectAPI();
    long oid = lom.createLO();
    LargeObject lob = lom.open(oid);
    Charset charset = Charset.forName(c.getEncoding().name());
    try {
      Writer w = new OutputStreamWriter(lob.getOutputStream(), charset);
      int ch = in.read();
      int p = 0;
      while (ch > -1 && p < max) {
        w.write(ch);
        ch = in.read();
        p++;
      }
      w.close(); // closes the large object too
    } catch (IOException e) {
      throw new PSQLException("Unexpected error writing large object to database.",
          PSQLState.UNEXPECTED_ERROR, e);
    }
    return oid;
  }
}
