package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An internal pool that shuts down while it is adding a session: HikariCP (7.0) does not wait for
 * the add (the connector says a login takes no time once the router closes) and, when the session
 * it was setting up finds the pool closed, drops it without closing it. The session must not stay
 * open on the server: the connector closes what its pool never took in.
 */
class PoolShutdownIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(0).build();

  @Test
  void aSessionAddedWhileThePoolShutsDownIsClosedOnTheServer() throws Exception {
    String app = "poolshutdown";
    Properties p = new Properties();
    p.setProperty("user", SANDBOX.cluster().user());
    if (SANDBOX.password() != null) p.setProperty("password", SANDBOX.password());
    p.setProperty("ApplicationName", app);
    PgConnector connector = new PgConnector(SANDBOX.cluster().primary().jdbcUrl(), p, app)
        .feedingPool();
    HeldAfterConnect held = new HeldAfterConnect(connector);
    // minimumIdle 1: the pool adds a session in the background, the one held after its connect
    HikariDataSource pool = Pools.create(app, Route.FALLBACK, held, 1, 1, Duration.ofSeconds(5),
        Duration.ofMinutes(30));
    try {
      assertTrue(held.connected.await(30, TimeUnit.SECONDS), "the pool never opened a session");
      assertEquals(1, sessions(app), "the session being added is open on the primary");

      connector.closing();
      pool.close(); // the router's order: connectors told first, then the pools, then the sweep
      connector.closeUnpooled();
    } finally {
      held.release.countDown(); // HikariCP sets it up now, finds its bag closed, and drops it
      pool.close();
    }
    try {
      Poll.until(Duration.ofSeconds(20), "no session of " + app + " left on the primary",
          () -> sessions(app) == 0);
      // the add has run its course by now: still none, so none came back later either
      Poll.pause(1000);
      assertEquals(0, sessions(app), "a session of the closed pool is open on the primary");
    } finally {
      held.first.close(); // the next test starts clean even when this one failed
    }
  }

  private static int sessions(String app) throws SQLException {
    return Integer.parseInt(SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", app));
  }

  /**
   * The pool's DataSource: holds the first connect it completes until the test lets it go, and
   * keeps that session reachable (a dropped pgjdbc session is closed only if and when the garbage
   * collector finds it, which an application with a large heap may not do for hours).
   */
  private static final class HeldAfterConnect implements DataSource {
    final CountDownLatch connected = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private final PgConnector connector;
    volatile Connection first;

    HeldAfterConnect(PgConnector connector) {
      this.connector = connector;
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection c = connector.connect();
      if (first == null) {
        first = c;
        connected.countDown();
        try {
          release.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return c;
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return getConnection();
    }

    @Override public PrintWriter getLogWriter() { return null; }
    @Override public void setLogWriter(PrintWriter out) { }
    @Override public void setLoginTimeout(int seconds) { connector.setLoginTimeout(seconds); }
    @Override public int getLoginTimeout() { return connector.getLoginTimeout(); }
    @Override public Logger getParentLogger() { return connector.getParentLogger(); }
    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      return connector.unwrap(iface);
    }

    @Override public boolean isWrapperFor(Class<?> iface) { return connector.isWrapperFor(iface); }
  }
}
