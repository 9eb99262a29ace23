package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The data source a replica pool draws from: the replica's connector, each session wrapped as a
 * {@link ReplicaSession} validated by the lag watcher of the server it reached (see
 * {@link ReplicaSessionBase}).
 */
final class ReplicaSessions extends DelegatingDataSource {
  /** The servers its address reaches; null: sessions are not asked which server they reached. */
  private final ServerWatchers servers;
  private final LagWatcher watcher;
  /** How its sessions got their settings, known once it has connected; null: the packet. */
  private final PgConnector settings;

  ReplicaSessions(DataSource connector, LagWatcher watcher) {
    this(connector, watcher, null, null);
  }

  /**
   * @param servers the servers of the address, which each new session learns it reached (one
   *     query when it opens), or null
   * @param settings the connector its sessions come from, which knows how they got their
   *     settings ({@link StartupSettings}); null when the startup packet carries them
   */
  ReplicaSessions(DataSource connector, LagWatcher watcher, ServerWatchers servers,
      PgConnector settings) {
    super(connector);
    this.watcher = watcher;
    this.servers = servers;
    this.settings = settings;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return session(delegate.getConnection());
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return session(delegate.getConnection(username, password));
  }

  /** The session's server and what serves it, set before the pool hands it to another thread. */
  private ReplicaSession session(Connection c) throws SQLException {
    LagWatcher w = watcher;
    try {
      if (servers != null) {
        ServerKey k = ServerKey.read(c);
        w = servers.watcherFor(k);
        if (w == null) {
          throw new SQLException("omnium: replica address " + servers.name + " reaches more"
              + " than " + ServerWatchers.MAX_SERVERS + " servers; a session on " + k
              + " is not used", "08004");
        }
      }
      // A promotion empties the pool, but a session whose opening was under way then (a fill, a
      // borrow's add) would stay idle on the primary until its idle timeout: refused here.
      boolean reported = RoleSignal.reportsPrimary(c);
      if (reported || w.state() == LagWatcher.State.NOT_IN_RECOVERY) {
        if (reported) w.noticePromoted();
        throw new SQLException("omnium: replica session on " + w.name() + " not kept: the"
            + " server is a primary now", "08004");
      }
    } catch (SQLException | RuntimeException e) {
      try {
        c.close();
      } catch (SQLException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    LagWatcher server = w;
    ReplicaSession s = new ReplicaSession(c, () -> server.state() == LagWatcher.State.OK
        && server.effectiveLagNanos(System.nanoTime()) != Long.MAX_VALUE);
    s.server = server;
    if (settings != null) {
      s.perTransaction = settings.perTransaction();
      s.pinned = settings.pinned();
    }
    return s;
  }
}
