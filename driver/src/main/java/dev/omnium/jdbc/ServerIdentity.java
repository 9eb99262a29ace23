package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Which cluster a server belongs to and which timeline it is on, read with one query (two on a
 * primary) on any session (the watcher's, the sampler's, a pooled one): its system identifier
 * ({@code pg_control_system()}: made by initdb, copied to every standby of that primary, different
 * for any other cluster) and its timeline. A standby counts as a replica of a primary only when
 * both agree ({@link #against}); the routing contract's rule 13.
 *
 * <p>The timeline: on a primary, its current one, exact, from the name of the WAL file it inserts
 * into ({@code pg_walfile_name(pg_current_wal_insert_lsn())}; where that function is revoked, the
 * newest of its checkpoint's and its minimum recovery point's, which a promotion sets to the new
 * timeline until its checkpoint is done). On a standby, the newest it is known to have reached:
 * its last restartpoint's ({@code pg_control_checkpoint()}), its minimum recovery point's
 * ({@code pg_control_recovery()}) and, where the role may see it ({@code pg_read_all_stats},
 * {@code pg_monitor} or a superuser), the WAL receiver's ({@code pg_stat_wal_receiver}). A
 * standby left on an abandoned timeline reports the old one from all three; one rebuilt or
 * rewound from the new primary, the new one from its first start. Without the WAL receiver's
 * column, a standby that switches timelines while streaming reports the new one from its next
 * restartpoint (at most {@code checkpoint_timeout} later) and counts as diverged until then.
 *
 * <p>PostgreSQL 15 and 18 let every role call these functions. Where an administrator revoked
 * them, the identity is unknown ({@link #unknown}) and the standby never counts as fresh: the
 * verdict names the grant that is missing.
 */
final class ServerIdentity {
  /** Functions every role may call by default; the WAL receiver's column is null without rights. */
  static final String QUERY = "SELECT s.system_identifier::text, pg_is_in_recovery(),"
      + " greatest(c.timeline_id, r.min_recovery_end_timeline,"
      + " (SELECT w.received_tli FROM pg_stat_wal_receiver w))"
      + " FROM pg_control_system() s, pg_control_checkpoint() c, pg_control_recovery() r";
  /** A primary's current timeline, exactly: the WAL file it inserts into (not during recovery). */
  static final String PRIMARY_TIMELINE =
      "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8))::bit(32)::int";

  /** How a standby relates to the primary; each is a state of its watcher and of {@code check}. */
  enum Verdict {
    /** The primary's system identifier and its current timeline: a replica of it. */
    SAME,
    /** Another system identifier: a standby of another cluster. */
    FOREIGN_CLUSTER,
    /** This cluster, another timeline: left on an abandoned one (or not switched yet). */
    DIVERGED_TIMELINE,
    /** Either side's identity could not be read. */
    IDENTITY_UNKNOWN
  }

  /** The system identifier as PostgreSQL prints it; null when unknown. */
  final String systemIdentifier;
  final int timeline;
  final boolean standby;
  /** Why the identity is unknown; null when it is known. */
  final String unknownBecause;

  private ServerIdentity(String systemIdentifier, int timeline, boolean standby,
      String unknownBecause) {
    this.systemIdentifier = systemIdentifier;
    this.timeline = timeline;
    this.standby = standby;
    this.unknownBecause = unknownBecause;
  }

  static ServerIdentity of(String systemIdentifier, int timeline, boolean standby) {
    return new ServerIdentity(systemIdentifier, timeline, standby, null);
  }

  static ServerIdentity unknown(String because) {
    return new ServerIdentity(null, 0, false, because);
  }

  /**
   * One query on {@code c} (autocommit). A role that may not call the functions gets an unknown
   * identity naming the grant, not an error.
   *
   * @throws SQLException any other failure (the session is likely gone)
   */
  static ServerIdentity read(Connection c) throws SQLException {
    String id;
    int timeline;
    boolean standby;
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(QUERY)) {
      rs.next();
      id = rs.getString(1);
      standby = rs.getBoolean(2);
      timeline = rs.getInt(3);
    } catch (SQLException e) {
      if (!"42501".equals(e.getSQLState())) throw e;
      return unknown("this role may not read the server's identity (" + e.getMessage()
          + "): GRANT EXECUTE ON FUNCTION pg_control_system(), pg_control_checkpoint(),"
          + " pg_control_recovery() TO it");
    }
    if (!standby) {
      // The checkpoint's (and the minimum recovery point's, set at a promotion) say the same
      // once the promotion's checkpoint is done; the WAL file name says it at once.
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(PRIMARY_TIMELINE)) {
        rs.next();
        timeline = rs.getInt(1);
      } catch (SQLException e) {
        if (!"42501".equals(e.getSQLState())) throw e; // revoked: the control file's answer
      }
    }
    return of(id, timeline, standby);
  }

  boolean known() {
    return unknownBecause == null;
  }

  /** How this server, a standby, relates to {@code primary}. */
  Verdict against(ServerIdentity primary) {
    if (!known() || !primary.known()) return Verdict.IDENTITY_UNKNOWN;
    if (!systemIdentifier.equals(primary.systemIdentifier)) return Verdict.FOREIGN_CLUSTER;
    return timeline == primary.timeline ? Verdict.SAME : Verdict.DIVERGED_TIMELINE;
  }

  /** What a log line or {@code check} says about a verdict other than SAME. */
  String explain(Verdict verdict, ServerIdentity primary) {
    switch (verdict) {
      case FOREIGN_CLUSTER:
        return "system identifier " + systemIdentifier + ", the primary's is "
            + primary.systemIdentifier + ": a standby of another cluster";
      case DIVERGED_TIMELINE:
        return "it replays timeline " + timeline + ", the primary is on timeline "
            + primary.timeline + ": a standby left on an abandoned timeline after a failover"
            + " (rebuild it, or pg_rewind it, from the primary), or one that has not replayed"
            + " the switch yet";
      case IDENTITY_UNKNOWN:
        return known() ? "the primary's identity is unknown: " + primary.unknownBecause
            : unknownBecause;
      default:
        return "a standby of this primary";
    }
  }

  @Override
  public String toString() {
    return known() ? "ServerIdentity[" + systemIdentifier + ", timeline " + timeline
        + (standby ? ", standby" : ", primary") + "]" : "ServerIdentity[unknown]";
  }
}
