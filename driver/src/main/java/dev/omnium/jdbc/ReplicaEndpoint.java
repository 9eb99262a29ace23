package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replica: its connection pool, its lag watcher and how many of its connections are lent out.
 */
final class ReplicaEndpoint {
  private static final Logger log = LoggerFactory.getLogger(ReplicaEndpoint.class);

  final String name;
  final LagWatcher watcher;
  final HikariDataSource pool;
  private final AtomicInteger inUse = new AtomicInteger();
  /**
   * Lent connections, so a black-holed replica's in-flight reads can be cut loose
   * (docs/routing-contract.md, rule 9).
   */
  private final Set<Connection> lent = ConcurrentHashMap.newKeySet();

  ReplicaEndpoint(String name, LagWatcher watcher, HikariDataSource pool) {
    this.name = name;
    this.watcher = watcher;
    this.pool = pool;
  }

  int inUse() {
    return inUse.get();
  }

  Connection borrow() throws SQLException {
    Connection c = pool.getConnection();
    inUse.incrementAndGet();
    lent.add(c);
    return c;
  }

  /**
   * The watcher's own probe timed out: the server does not answer (frozen, black-holed). Reads
   * waiting on it would wait for their socket timeout; aborting their sockets now makes them fail
   * with a lost connection, which the first statement of a read-only unit of work retries on the
   * fallback route.
   */
  void abortLent() {
    int n = 0;
    for (Connection c : lent) {
      try {
        c.abort(Runnable::run);
        n++;
      } catch (SQLException | RuntimeException ignored) {
        // already gone
      }
    }
    if (n > 0) log.warn("omnium: replica {} does not answer: aborted {} connection(s) in use",
        name, n);
  }

  /** Returns a connection to the pool, or evicts it when the server ended its session. */
  void release(Connection c, boolean dead) {
    inUse.decrementAndGet();
    lent.remove(c);
    Pools.release(pool, c, dead);
  }
}
