package dev.omnium.jdbc;

import java.sql.SQLException;
import org.postgresql.copy.CopyIn;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;
import org.postgresql.util.ByteStreamWriter;

/**
 * pgjdbc's COPY API on the logical connection ({@code getCopyAPI()}, by cast or by
 * {@code unwrap(PGConnection.class)}): pgjdbc's own, on the primary session. A {@code COPY FROM}
 * that ends in autocommit mode committed a write, which read-your-writes remembers as any other
 * (in a transaction, the commit that follows does); every {@code copyIn} variant ends in
 * {@link #copyIn(String)}'s {@code endCopy()}, so that is where it is noted.
 */
final class LogicalCopyManager extends CopyManager {
  private final Runnable copied;

  /**
   * @param primary the primary session, as pgjdbc's connection
   * @param copied called after each COPY FROM that ended
   */
  LogicalCopyManager(BaseConnection primary, Runnable copied) throws SQLException {
    super(primary);
    this.copied = copied;
  }

  @Override
  public CopyIn copyIn(String sql) throws SQLException {
    return new Noted(super.copyIn(sql), copied);
  }

  /** A COPY FROM that notes its end. */
  private static final class Noted implements CopyIn {
    private final CopyIn in;
    private final Runnable copied;

    Noted(CopyIn in, Runnable copied) {
      this.in = in;
      this.copied = copied;
    }

    @Override
    public long endCopy() throws SQLException {
      long rows = in.endCopy();
      copied.run();
      return rows;
    }

    @Override
    public void writeToCopy(byte[] buf, int off, int siz) throws SQLException {
      in.writeToCopy(buf, off, siz);
    }

    @Override
    public void writeToCopy(ByteStreamWriter from) throws SQLException {
      in.writeToCopy(from);
    }

    @Override
    public void flushCopy() throws SQLException {
      in.flushCopy();
    }

    @Override
    public int getFieldCount() {
      return in.getFieldCount();
    }

    @Override
    public int getFormat() {
      return in.getFormat();
    }

    @Override
    public int getFieldFormat(int field) {
      return in.getFieldFormat(field);
    }

    @Override
    public boolean isActive() {
      return in.isActive();
    }

    @Override
    public void cancelCopy() throws SQLException {
      in.cancelCopy();
    }

    @Override
    public long getHandledRowCount() {
      return in.getHandledRowCount();
    }
  }
}
