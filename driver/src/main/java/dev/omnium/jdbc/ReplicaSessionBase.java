package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.BooleanSupplier;
import org.postgresql.PGConnection;

/**
 * A physical replica session as omnium's replica pool holds it. HikariCP validates a session
 * idle for more than 500 ms with {@code isValid()}, one round trip the application's own pool
 * straight to the replica does not pay on a held connection; under light traffic that is one
 * extra round trip per read. Here the replica's lag watcher, which probes the server every
 * heartbeat interval anyway, stands in for it: while its last probe answered, the session counts
 * as valid unless its socket is closed, with no round trip. A session the server ended meanwhile
 * fails at its first statement, which the router retries on the fallback route (the first
 * statement of a read-only unit of work has returned nothing yet) and evicts. When the watcher
 * has no answer, {@code isValid()} asks the server as pgjdbc does.
 *
 * <p>This class holds that logic; the generated subclass {@link ReplicaSession} delegates every
 * other {@link Connection} method.
 */
abstract class ReplicaSessionBase extends DelegatingWrapper<Connection> implements Connection {
  private final BooleanSupplier serverAnswers;
  /**
   * The settings the server reported ({@link Binding#REPORTED}) when the session was first lent,
   * null before. Every return to the pool checks them unchanged or evicts the session, so they
   * hold at every later lending: taken once, never changed (written before the pool hands the
   * session to another thread).
   */
  String[] reported;
  /**
   * pgjdbc's session under this wrapper, found once here rather than by an unwrap chain through
   * the pool's proxy at every borrow, bind and return; null where it is not pgjdbc's.
   */
  final PGConnection pg;
  /** What the server reported on this session, read live without look-ups; null if unreadable. */
  final ReportedStatus status;
  /**
   * What each transaction on this session sets, when it was opened behind a pooler
   * ({@link StartupSettings}); null when its startup packet carried the settings.
   */
  TransactionSettings perTransaction;
  /**
   * The settings this session set when it opened, where a pooler pins sessions ({@link
   * PinnedSettings}); a reset sets them again. Null otherwise.
   */
  PinnedSettings pinned;
  /**
   * The lag watcher of the server this session reached (its address may reach several: {@link
   * ServerWatchers}); the session serves reads only while that server is fresh.
   */
  LagWatcher server;

  ReplicaSessionBase(Connection delegate, BooleanSupplier serverAnswers) {
    super(delegate);
    this.serverAnswers = serverAnswers;
    this.pg = pgjdbc(delegate);
    this.status = ReportedStatus.of(pg);
  }

  /** True when the server last said it is not a hot standby (see {@link RoleSignal}). */
  final boolean reportsPrimary() {
    ReportedStatus st = status;
    if (st == null) return RoleSignal.reportsPrimary(pg);
    try {
      return "off".equals(st.inHotStandby());
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static PGConnection pgjdbc(Connection c) {
    if (c instanceof PGConnection p) return p;
    try {
      return c.unwrap(PGConnection.class);
    } catch (SQLException | RuntimeException e) {
      return null;
    }
  }

  @Override
  public final boolean isValid(int timeout) throws SQLException {
    if (timeout < 0) throw PgjdbcErrors.invalidParameter("Invalid timeout (" + timeout + "<0).");
    if (serverAnswers.getAsBoolean() && !delegate.isClosed()) return true;
    return delegate.isValid(timeout);
  }
}
