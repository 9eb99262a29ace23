package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Which server a session reached, when one address may reach several (a reader endpoint: an
 * HAProxy, a Kubernetes Service, a cloud reader endpoint): read once when the session opens, so
 * that freshness is known per server, not per address ({@link ServerWatchers}).
 *
 * <p>The key is the server's own listen address and port for the session
 * ({@code inet_server_addr()}, {@code inet_server_port()}: the server's side of the TCP
 * connection, which differs per server behind a balancer, as a proxy's does not), with the
 * cluster's system identifier ({@code pg_control_system()}, the same on every standby of one
 * primary) so that two clusters reusing an address never share a key. Over a Unix socket (a
 * pooler on the server's host) the server has no address: its start time
 * ({@code pg_postmaster_start_time()}) tells it apart instead. Where the role may not read the
 * system identifier, the address alone.
 */
final class ServerKey {
  static final String QUERY = "SELECT inet_server_addr()::text, inet_server_port(),"
      + " pg_postmaster_start_time()::text, (SELECT system_identifier::text"
      + " FROM pg_control_system())";
  static final String QUERY_WITHOUT_IDENTIFIER = "SELECT inet_server_addr()::text,"
      + " inet_server_port(), pg_postmaster_start_time()::text, NULL::text";

  private final String key;
  /** What logs, JMX and {@code check} call the server: its address and port where known. */
  final String label;

  ServerKey(String key, String label) {
    this.key = key;
    this.label = label;
  }

  /**
   * One query on {@code c} (autocommit, no transaction left open).
   *
   * @throws SQLException the session failed (it is likely gone)
   */
  static ServerKey read(Connection c) throws SQLException {
    try {
      return read(c, QUERY);
    } catch (SQLException e) {
      if (!"42501".equals(e.getSQLState())) throw e;
      return read(c, QUERY_WITHOUT_IDENTIFIER); // pg_control_system() revoked
    }
  }

  private static ServerKey read(Connection c, String query) throws SQLException {
    Object quiet = Tracing.quietBegin(); // omnium's own statement: no span
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(query)) {
      rs.next();
      return of(rs.getString(1), rs.getInt(2), rs.getString(3), rs.getString(4));
    } finally {
      Tracing.quietEnd(quiet);
    }
  }

  static ServerKey of(String addr, int port, String startedAt, String systemIdentifier) {
    String where;
    if (addr == null) {
      where = "local server started " + startedAt;
    } else {
      int mask = addr.indexOf('/'); // inet's text form may carry a mask
      String host = mask < 0 ? addr : addr.substring(0, mask);
      where = (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
    return new ServerKey((systemIdentifier == null ? "" : systemIdentifier) + "/" + where, where);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ServerKey k && k.key.equals(key);
  }

  @Override
  public int hashCode() {
    return key.hashCode();
  }

  @Override
  public String toString() {
    return label;
  }
}
