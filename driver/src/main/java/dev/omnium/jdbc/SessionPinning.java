package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Proves that the pooler in front of a server pins one server session to each client connection
 * and resets it when the client leaves: PgBouncer's session pooling with its default
 * {@code server_reset_query = DISCARD ALL}. There, settings a session sets once when it opens hold
 * for every transaction of that client and are gone before another client gets the server
 * session, as the startup packet's would be; anywhere else (transaction pooling, a pool that does
 * not reset) they would stay on a session others share, so nothing is set until this proof holds.
 *
 * <p>What the server itself shows ({@code pg_stat_activity}), with two client connections of the
 * pooler, same user and database (the same pool):
 * <ol>
 *   <li>the first runs a query no one else sends and learns its server session's pid;</li>
 *   <li>the second finds that server session idle with that query still its last, while the first
 *       stays connected: no reset after the transaction (a pooler resetting after every
 *       transaction would show its reset), and the second was not given it (transaction pooling
 *       hands the server session just released to the next client);</li>
 *   <li>once the first has closed, the second sees the reset ({@code DISCARD ALL} or
 *       {@code RESET ALL}) run on that server session.</li>
 * </ol>
 * Anything else, an error or the time running out, and the proof fails: the caller keeps the
 * safe way, settings with each transaction. Every wait is bounded by the deadline.
 */
final class SessionPinning {
  /** Opens a client connection of the pooler without omnium's startup options. */
  @FunctionalInterface
  interface Opener {
    Connection open() throws SQLException;
  }

  private static final String LAST_QUERY_SELECT = "SELECT query, state FROM pg_stat_activity";
  private static final String LAST_QUERY = LAST_QUERY_SELECT + " WHERE pid = ?";
  private static final String PROBE = "SELECT pg_backend_pid() AS omnium_pinning_";
  private static final long POLL_NANOS = 2_000_000L;
  /**
   * How long a reset may take once the first client has left (PgBouncer runs it as the client
   * leaves: whole proofs took 10-25 ms here); a pooler that never resets costs the connector this
   * much once.
   */
  private static final long RESET_WAIT_NANOS = 1_000_000_000L;

  private SessionPinning() { }

  /**
   * @param timeoutMillis how long the whole proof may take
   * @return null when proven, else what the servers showed instead
   */
  static String disproof(Opener opener, long timeoutMillis) {
    long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
    try (Connection watcher = open(opener, deadline)) {
      int pid;
      try (Connection first = open(opener, deadline)) {
        String[] probe = new String[1];
        pid = probe(first, deadline, probe);
        String kept = kept(watcher, pid, probe[0], deadline);
        if (kept != null) return kept;
      }
      long resetBy = Math.min(deadline, System.nanoTime() + RESET_WAIT_NANOS);
      while (true) {
        bound(watcher, deadline);
        String[] seen = last(watcher, pid);
        if (seen == null) return "the server session of a client that left was closed";
        String q = seen[0].trim().toUpperCase(Locale.ROOT);
        if (q.endsWith(";")) q = q.substring(0, q.length() - 1).trim();
        if (q.equals("DISCARD ALL") || q.equals("RESET ALL")) return null;
        if (!seen[0].startsWith(PROBE)) {
          return "the server session of a client that left ran '" + seen[0] + "', not a reset";
        }
        if (System.nanoTime() - resetBy >= 0) {
          return "no reset of the server session of a client that left within "
              + RESET_WAIT_NANOS / 1_000_000 + " ms";
        }
        LockSupport.parkNanos(POLL_NANOS);
      }
    } catch (SQLException | RuntimeException e) {
      return "the proof failed: " + e.getMessage();
    }
  }

  /**
   * The first two steps again for {@code session}, a client connection just opened where the
   * whole proof held before (each later login of the connector): its server session is its own
   * while it stays connected. What a bouncer restarted with transaction pooling fails. One more
   * client connection, two queries.
   *
   * @return null when it holds, else what the servers showed instead
   * @throws SQLException when it could not be checked (a pool with no server session free for
   *     the second client, say): neither proof nor disproof
   */
  static String disproofWith(Connection session, Opener opener, long timeoutMillis)
      throws SQLException {
    long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
    try (Connection watcher = open(opener, deadline)) {
      String[] probe = new String[1];
      int timeout = session.getNetworkTimeout(); // the session's own (socketTimeout), kept
      int pid;
      try {
        pid = probe(session, deadline, probe);
      } finally {
        session.setNetworkTimeout(Runnable::run, timeout);
      }
      return kept(watcher, pid, probe[0], deadline);
    }
  }

  /** Runs a query no one else sends on {@code c}: its server session's pid (the text in out). */
  private static int probe(Connection c, long deadline, String[] out) throws SQLException {
    out[0] = PROBE + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
    bound(c, deadline);
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(out[0])) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /**
   * Whether server session {@code pid}, of a client still connected, kept {@code probe} as its
   * last query, idle, as {@code watcher} sees it: null when it did, else what it saw.
   */
  private static String kept(Connection watcher, int pid, String probe, long deadline)
      throws SQLException {
    bound(watcher, deadline);
    String[] seen = last(watcher, pid);
    if (seen != null && seen[0].startsWith(LAST_QUERY_SELECT)) { // the watcher's own
      return "the next client was given the server session a connected client's transaction"
          + " had just used (transaction pooling)";
    }
    if (seen == null || !probe.equals(seen[0]) || !"idle".equals(seen[1])) {
      return "the server session of a connected client showed "
          + (seen == null ? "nothing" : "'" + seen[0] + "' (" + seen[1] + ")")
          + " after its transaction, not its own last query";
    }
    return null;
  }

  private static Connection open(Opener opener, long deadline) throws SQLException {
    if (System.nanoTime() - deadline >= 0) throw new SQLException("out of time", "08001");
    Connection c = opener.open();
    c.setAutoCommit(true);
    return c;
  }

  /** What is left of the deadline bounds the next query (a pooler may queue it). */
  private static void bound(Connection c, long deadline) throws SQLException {
    long left = (deadline - System.nanoTime()) / 1_000_000L;
    if (left <= 0) throw new SQLException("out of time", "57014");
    c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, left));
  }

  /** The last query and state of server session {@code pid}, or null when it is gone. */
  private static String[] last(Connection c, int pid) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LAST_QUERY)) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new String[] {String.valueOf(rs.getString(1)), rs.getString(2)}
            : null;
      }
    }
  }
}
