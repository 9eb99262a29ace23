package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * The one place that reads pgjdbc's driver-internal transaction state ({@link BaseConnection},
 * which pgjdbc's public API does not expose). PgTransactionStateTest fails when pgjdbc changes it.
 */
final class PgTransactionState {
  static final int IDLE = 0;
  static final int OPEN = 1;
  static final int FAILED = 2;

  private PgTransactionState() { }

  /** {@link #IDLE}, {@link #OPEN} or {@link #FAILED}: pgjdbc's state of {@code c}. */
  static int of(Connection c) throws SQLException {
    BaseConnection pg = c instanceof BaseConnection ? (BaseConnection) c
        : c.unwrap(BaseConnection.class);
    TransactionState s = pg.getTransactionState();
    return s == TransactionState.IDLE ? IDLE : s == TransactionState.OPEN ? OPEN : FAILED;
  }

  /** Whether pgjdbc begins the next transaction of {@code c} with {@code BEGIN READ ONLY}. */
  static boolean beginsReadOnly(Connection c) throws SQLException {
    BaseConnection pg = c instanceof BaseConnection ? (BaseConnection) c
        : c.unwrap(BaseConnection.class);
    return pg.hintReadOnly();
  }

  /**
   * From now on pgjdbc begins the transactions of {@code c} with {@code BEGIN READ ONLY}; with
   * its {@code readOnlyMode=transaction} nothing is sent or set on the session. Outside a
   * transaction.
   */
  static void beginReadOnly(Connection c) throws SQLException {
    if (!c.isReadOnly()) c.setReadOnly(true);
  }

  /** Whether a transaction is open (or failed) on this pgjdbc session. */
  static boolean inTransaction(Connection c) throws SQLException {
    return c.unwrap(BaseConnection.class).getTransactionState() != TransactionState.IDLE;
  }

  /** Whether a transaction is open (or failed) on {@code c} if it is a pgjdbc session itself. */
  static boolean inTransactionOn(Connection c) {
    return c instanceof BaseConnection
        && ((BaseConnection) c).getTransactionState() != TransactionState.IDLE;
  }

  /** Whether {@code c} is a pgjdbc session itself with no transaction open (or failed). */
  static boolean idleOn(Connection c) {
    return c instanceof BaseConnection
        && ((BaseConnection) c).getTransactionState() == TransactionState.IDLE;
  }

  /** Whether a transaction is open and not failed: a COMMIT would commit it. */
  static boolean isOpen(Connection c) throws SQLException {
    return c.unwrap(BaseConnection.class).getTransactionState() == TransactionState.OPEN;
  }
}
