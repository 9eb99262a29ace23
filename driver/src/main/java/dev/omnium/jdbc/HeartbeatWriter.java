package dev.omnium.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the heartbeat row on the primary when this process holds the writer lock. Every process
 * with {@code heartbeatWriter=true} competes each interval with {@code pg_try_advisory_lock} on its
 * own dedicated connection; the holder updates the single row in place (a HOT update: the table
 * stays one row in one page). The lock is session-scoped, so when the holder's session dies another
 * process takes over at its next attempt, within about one or two intervals.
 *
 * <p>A holder that stops without its session dying (a long GC pause, SIGSTOP, a partition where the
 * kernel still acknowledges) must not keep the lock: every session of the writer carries a
 * server-side {@code idle_session_timeout} of {@link #leaseMillis} (a holder is never idle longer
 * than one interval), so the server ends a stopped holder's session and frees the lock; the
 * server's TCP keepalives and {@code tcp_user_timeout} do the same for a host that vanished.
 *
 * <p>Behind a pooler (its connector sends the settings per transaction, {@link StartupSettings})
 * a session lock means nothing: the next transaction may run on another server session, shared
 * with other clients, and the lock stays with the one it was taken on. There the row is the
 * lease, and nothing is set on the session: see {@link #leaseRound}.
 */
final class HeartbeatWriter extends IntervalSession {
  private static final Logger log = LoggerFactory.getLogger(HeartbeatWriter.class);

  private final String table;
  private final long lockKey;
  private final long leaseMillis;
  private volatile boolean leader;
  private String lastProblem;
  /** Behind a pooler: the transaction id of this writer's last beat (the row's xmin), or -1. */
  private long lastXid = -1;

  HeartbeatWriter(PgConnector connector, String table, Duration interval, String threadName) {
    super(connector, interval, threadName, 200);
    this.table = table;
    this.lockKey = lockKey(table);
    this.leaseMillis = leaseMillis(interval);
  }

  /**
   * The advisory lock key writers of one heartbeat table compete for: a stable 64-bit hash (FNV-1a)
   * of the table name, so processes agree on it without configuration.
   */
  static long lockKey(String table) {
    long h = 0xcbf29ce484222325L;
    for (byte b : ("omnium-heartbeat:" + table).getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }

  /**
   * How long a writer's session may stay idle before the server ends it: four intervals, at least
   * two seconds (a loaded machine may delay a beat). Takeover after a freeze takes about this plus
   * one interval.
   */
  static long leaseMillis(Duration interval) {
    return Math.max(2_000, 4 * interval.toMillis());
  }

  boolean isLeader() {
    return leader;
  }

  /** One attempt: take the lock if free, then write the beat while holding it. */
  @Override
  void round() {
    try {
      Connection c = session();
      if (connector().perTransaction() != null) {
        leaseRound(c);
        lastProblem = null;
        return;
      }
      if (!leader) {
        if (!tryLock(c)) return;
        ensureTable(c);
        leader = true;
        log.info("omnium: this process now writes the heartbeat ({}) every {} ms", table,
            intervalNanos() / 1_000_000);
      }
      try (Statement st = c.createStatement()) {
        if (st.executeUpdate("UPDATE " + table + " SET beat_at = now() WHERE id = 1") == 0) {
          st.executeUpdate("INSERT INTO " + table
              + " VALUES (1, now()) ON CONFLICT (id) DO UPDATE SET beat_at = now()");
        }
      }
      lastProblem = null;
    } catch (SQLException | RuntimeException e) {
      // The lock lives and dies with the session: after any error the session is dropped, so this
      // process stops writing at once and competes again on a fresh connection.
      if (leader) log.warn("omnium: heartbeat writer lost its session, another process may take"
          + " over: {}", e.getMessage());
      leader = false;
      String problem = e.getMessage();
      if (problem != null && !problem.equals(lastProblem)) {
        log.warn("omnium: heartbeat writer cannot write {}: {}", table, problem);
      }
      lastProblem = problem;
      dropSession();
    }
  }

  /** A beat is written in a moment: the socket is aborted only when the thread is stuck. */
  @Override
  boolean inFlight() {
    return false;
  }

  /**
   * One beat behind a pooler, one statement in a transaction of its own: the writer updates the
   * row only when it wrote the last beat (the row's {@code xmin} is the transaction id its last
   * update returned) or when nobody wrote it for {@link #leaseMillis} (the primary's {@code now()}
   * against the timestamps it wrote itself: one clock). Two writers that find it stale at once
   * queue on the row; the second re-checks the row the first wrote, finds it fresh and another's,
   * and updates nothing. A writer that stopped (killed, frozen) is replaced one lease after its
   * last beat, and one that comes back finds the row another's. A process that writes the row
   * without competing (the sidecar of an older version, a test) keeps it fresh: then nobody here
   * needs to.
   */
  private void leaseRound(Connection c) throws SQLException {
    long xid = -1;
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("UPDATE " + table
        + " SET beat_at = now() WHERE id = 1 AND (xmin::text::bigint = " + lastXid
        + " OR beat_at < now() - interval '" + leaseMillis + " milliseconds')"
        + " RETURNING xmin::text::bigint")) {
      if (rs.next()) xid = rs.getLong(1);
    } catch (SQLException e) {
      if (!"42P01".equals(e.getSQLState())) throw e;
      ensureTable(c); // no table: create it; the insert below writes its row
    }
    if (xid < 0) {
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("INSERT INTO "
          + table + " VALUES (1, now()) ON CONFLICT (id) DO NOTHING"
          + " RETURNING xmin::text::bigint")) {
        if (rs.next()) xid = rs.getLong(1);
      }
    }
    boolean was = leader;
    leader = xid >= 0;
    if (leader) lastXid = xid;
    if (leader && !was) {
      log.info("omnium: this process now writes the heartbeat ({}) every {} ms, leased by the"
          + " row itself (behind a pooler)", table, intervalNanos() / 1_000_000);
    } else if (was && !leader) {
      log.info("omnium: another process writes the heartbeat ({}) now", table);
    }
  }

  /**
   * The server-side bounds of a frozen or vanished holder. {@code idle_session_timeout} exists from
   * PostgreSQL 14 on; on older servers the lock then lives as long as the session (logged once).
   */
  @Override
  void prepare(Connection c) throws SQLException {
    if (connector().perTransaction() != null) return; // nothing on a session a pooler shares
    try (Statement st = c.createStatement()) {
      st.execute("SET idle_session_timeout = " + leaseMillis);
    } catch (SQLException e) {
      if (!"42704".equals(e.getSQLState())) throw e;
      if (!"42704".equals(lastProblem)) {
        log.warn("omnium: this server has no idle_session_timeout (PostgreSQL < 14): a frozen"
            + " heartbeat writer keeps the writer lock until its session ends");
      }
      lastProblem = "42704";
    }
    long keepalive = Math.max(1, leaseMillis / 4000);
    try (Statement st = c.createStatement()) {
      st.execute("SET tcp_keepalives_idle = " + keepalive + "; SET tcp_keepalives_interval = "
          + keepalive + "; SET tcp_keepalives_count = 3; SET tcp_user_timeout = " + leaseMillis);
    } catch (SQLException e) {
      // Unix-socket sessions and old servers lack TCP settings: idle_session_timeout still works.
      log.debug("omnium: heartbeat session without TCP keepalive settings: {}", e.getMessage());
    }
  }

  private boolean tryLock(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
      ps.setLong(1, lockKey);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  private void ensureTable(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS " + table
          + " (id int PRIMARY KEY CHECK (id = 1), beat_at timestamptz NOT NULL)");
      if (connector().perTransaction() == null) {
        st.execute("INSERT INTO " + table + " VALUES (1, now()) ON CONFLICT (id) DO NOTHING");
      }
    }
  }

  /** The lock lives and dies with the session. */
  @Override
  void dropSession() {
    leader = false;
    super.dropSession();
  }
}
