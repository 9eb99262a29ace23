package dev.omnium.ops;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.util.UUID;

/**
 * Elects one runner among every process that starts a run: a single row in
 * {@code omnium_retention_lease}, taken with one atomic statement when it is free (expired or
 * never taken) and renewed by its holder before each step. Each statement commits on its own, and
 * the lease lives in a row rather than in a session, so it works the same through a
 * transaction-pooling PgBouncer, where a session advisory lock would be held by whichever server
 * session the pooler happened to use. Only the primary's clock is read (one clock, compared with
 * itself). A holder that dies stops renewing; the lease is free again when it expires.
 */
final class Lease {
  /** Why the lease was not taken. */
  record Refusal(String holder, String until, LocalDate doneDay, boolean doneToday) { }

  /** Thrown when a holder finds its lease taken over (it was frozen past the expiry). */
  static final class LostException extends SQLException {
    private static final long serialVersionUID = 1L;

    LostException(String message) {
      super(message, "55000");
    }
  }

  private final String holder;
  private final Duration duration;
  private final String token = UUID.randomUUID().toString();

  Lease(String holder, Duration duration) {
    this.holder = holder;
    this.duration = duration;
  }

  String token() {
    return token;
  }

  String holder() {
    return holder;
  }

  /**
   * Takes the lease if it is free. With {@code unlessDoneOn}, also only if no run completed on
   * that day or later (the fleet's daily run).
   *
   * @return null when this process holds it now, else who does (or that today's run is done)
   */
  Refusal acquire(Connection c, LocalDate unlessDoneOn) throws SQLException {
    String sql = "INSERT INTO " + OpsTables.LEASE + " AS l (id, holder, token, acquired_at,"
        + " expires_at) VALUES (1, ?, ?, now(), now() + ?::interval)"
        + " ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, token = excluded.token,"
        + " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at"
        + " WHERE l.expires_at < now()"
        + (unlessDoneOn == null ? "" : " AND (l.done_day IS NULL OR l.done_day < ?)")
        + " RETURNING token";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, holder);
      ps.setString(2, token);
      ps.setString(3, duration.toMillis() + " milliseconds");
      if (unlessDoneOn != null) {
        ps.setObject(4, unlessDoneOn);
      }
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && token.equals(rs.getString(1))) {
          return null;
        }
      }
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT holder, expires_at::text, done_day,"
        + " expires_at > now() FROM " + OpsTables.LEASE + " WHERE id = 1");
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        return new Refusal("nobody", null, null, false);
      }
      LocalDate done = rs.getObject(3, LocalDate.class);
      boolean live = rs.getBoolean(4);
      boolean doneToday = !live && unlessDoneOn != null && done != null
          && !done.isBefore(unlessDoneOn);
      return new Refusal(rs.getString(1), rs.getString(2), done, doneToday);
    }
  }

  /** Extends the lease; throws {@link LostException} when another process holds it now. */
  void renew(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + OpsTables.LEASE
        + " SET expires_at = now() + ?::interval WHERE id = 1 AND token = ?")) {
      ps.setString(1, duration.toMillis() + " milliseconds");
      ps.setString(2, token);
      if (ps.executeUpdate() != 1) {
        throw new LostException("the retention lease was taken over by another process (this one"
            + " did not renew it within " + duration.toSeconds() + " s): stopping");
      }
    }
  }

  /** Frees the lease, recording the day whose run completed (null: none did). */
  void release(Connection c, LocalDate doneDay) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + OpsTables.LEASE
        + " SET expires_at = now(), done_day = coalesce(?, done_day),"
        + " done_at = CASE WHEN ?::date IS NULL THEN done_at ELSE now() END"
        + " WHERE id = 1 AND token = ?")) {
      ps.setObject(1, doneDay);
      ps.setObject(2, doneDay);
      ps.setString(3, token);
      ps.executeUpdate();
    }
  }
}
