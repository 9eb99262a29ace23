package dev.omnium.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

/** One replica: its connection pool, its lag watcher and how many of its connections are lent out. */
final class ReplicaEndpoint {
  final String name;
  final LagWatcher watcher;
  final HikariDataSource pool;
  private final AtomicInteger inUse = new AtomicInteger();

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
    return c;
  }

  /** Returns a connection to the pool, or evicts it when the server ended its session. */
  void release(Connection c, boolean dead) {
    inUse.decrementAndGet();
    Pools.release(pool, c, dead);
  }
}
