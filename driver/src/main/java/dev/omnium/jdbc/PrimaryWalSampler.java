package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Once per heartbeatInterval, on a dedicated primary connection and thread, reads the primary's
 * WAL insert position into the router's {@link WalTimeline}, stamped with the client's monotonic
 * clock: one small query per interval per router, whatever the number of replicas. It also
 * estimates the primary's clock offset (reported only).
 *
 * <p>When the primary cannot be read, no sample is added: every replica's effective lag then
 * grows with the age of the last sample, the safe direction.
 */
final class PrimaryWalSampler implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PrimaryWalSampler.class);
  static final String QUERY = "SELECT pg_current_wal_insert_lsn()::text,"
      + " extract(epoch FROM clock_timestamp())::float8";

  private final PgConnector connector;
  private final WalTimeline timeline;
  private final long intervalNanos;
  private final Thread thread;
  private final ClockOffset offset = new ClockOffset();
  private volatile boolean closed;
  private volatile Connection connection;
  private volatile String lastError;
  private boolean failing;

  PrimaryWalSampler(PgConnector connector, WalTimeline timeline, Duration interval,
      String threadName) {
    this.connector = connector;
    this.timeline = timeline;
    this.intervalNanos = interval.toNanos();
    this.thread = new Thread(this, threadName);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  WalTimeline timeline() {
    return timeline;
  }

  ClockOffset clockOffset() {
    return offset;
  }

  String lastError() {
    return lastError;
  }

  @Override
  public void run() {
    long next = System.nanoTime();
    while (!closed) {
      sample();
      long now = System.nanoTime();
      next += intervalNanos;
      if (next < now) next = now;
      while (!closed && (now = System.nanoTime()) < next) {
        LockSupport.parkNanos(this, next - now);
      }
    }
    closeConnection();
  }

  /** One sample; never throws. */
  void sample() {
    try {
      if (connection == null) connection = connector.connect();
      long sentMicros = ClockOffset.nowMicros();
      long sent = System.nanoTime();
      try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(QUERY)) {
        long receivedMicros = ClockOffset.nowMicros();
        rs.next();
        String lsn = rs.getString(1);
        timeline.add(sent, Lsn.parse(lsn));
        offset.record(sentMicros, receivedMicros, rs.getDouble(2));
      }
      lastError = null;
      if (failing) {
        failing = false;
        log.info("omnium: primary WAL position readable again; replica lag is measured again");
      }
    } catch (SQLException | RuntimeException e) {
      closeConnection();
      String msg = e instanceof SQLException
          ? e.getMessage() + " (SQLState " + ((SQLException) e).getSQLState() + ")" : e.toString();
      lastError = msg;
      if (!failing) {
        failing = true;
        log.warn("omnium: cannot read the primary's WAL position: {}. Replica lag grows from the"
            + " last sample until it can; reads go to the fallback pool once it exceeds maxAge.",
            msg);
      }
    }
  }

  private void closeConnection() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException | RuntimeException ignored) {
        // the connection is being discarded
      }
    }
  }

  /**
   * Asks the thread to end without waiting: a sample in flight on a frozen primary is aborted,
   * so closing many routers costs no socket timeout. {@link #close()} also waits.
   */
  void stop() {
    closed = true;
    LockSupport.unpark(thread);
    Connection c = connection;
    if (c != null && thread.getState() == Thread.State.RUNNABLE) {
      try {
        c.abort(Runnable::run);
      } catch (SQLException | RuntimeException ignored) {
        // the socket timeout ends the thread
      }
    }
  }

  @Override
  public void close() {
    stop();
    try {
      thread.join(500);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
