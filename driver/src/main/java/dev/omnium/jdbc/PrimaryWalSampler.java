package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
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
final class PrimaryWalSampler extends IntervalSession {
  private static final Logger log = LoggerFactory.getLogger(PrimaryWalSampler.class);
  static final String QUERY = "SELECT pg_current_wal_insert_lsn()::text,"
      + " extract(epoch FROM clock_timestamp())::float8";

  private final WalTimeline timeline;
  private final ClockOffset offset = new ClockOffset();
  private volatile String lastError;
  private boolean failing;
  /** The primary's identity, read once per session: what a replica must share to be fresh. */
  private volatile ServerIdentity identity;
  /** When a round last succeeded (nanoTime); 0: never. */
  private volatile long answeredNanos;

  /**
   * The least time between two samples when read-your-writes asks for them: at most about 100
   * extra small queries a second on the primary, however many reads ask.
   */
  static final Duration EARLY_SAMPLE_GAP = Duration.ofMillis(10);

  PrimaryWalSampler(PgConnector connector, WalTimeline timeline, Duration interval,
      String threadName) {
    super(connector, interval, threadName, 500);
    this.timeline = timeline;
    allowEarlyRounds(EARLY_SAMPLE_GAP.compareTo(interval) < 0 ? EARLY_SAMPLE_GAP : interval);
  }

  /**
   * Asks for a sample soon (within {@link #EARLY_SAMPLE_GAP} of the previous one) rather than at
   * the next interval: asked by a read or token that needs a remembered commit dated, which the
   * first sample sent after the commit does.
   */
  void requestSample() {
    requestEarlyRound();
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

  /**
   * The identity of the primary this sampler reads, as its current session read it; null before
   * the first session. A failover gives the next session a new timeline (or server).
   */
  ServerIdentity identity() {
    return identity;
  }

  /** Whether a round succeeded within {@code windowNanos} before {@code nowNanos}. */
  boolean answeredWithin(long nowNanos, long windowNanos) {
    long at = answeredNanos;
    return at != 0 && nowNanos - at <= windowNanos;
  }

  @Override
  void prepare(Connection c) throws SQLException {
    identity = ServerIdentity.read(c);
  }

  @Override
  boolean inFlight() {
    return threadRunnable();
  }

  /** One sample; never throws. */
  @Override
  void round() {
    long sent = System.nanoTime();
    try {
      Connection connection = session();
      long sentMicros = ClockOffset.nowMicros();
      sent = System.nanoTime();
      try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(QUERY)) {
        long receivedMicros = ClockOffset.nowMicros();
        rs.next();
        String lsn = rs.getString(1);
        timeline.add(sent, Lsn.parse(lsn));
        offset.record(sentMicros, receivedMicros, rs.getDouble(2));
      }
      answeredNanos = System.nanoTime();
      lastError = null;
      if (failing) {
        failing = false;
        log.info("omnium: primary WAL position readable again; replica lag is measured again");
      }
    } catch (SQLException | RuntimeException e) {
      timeline.failed(sent);
      dropSession();
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
}
