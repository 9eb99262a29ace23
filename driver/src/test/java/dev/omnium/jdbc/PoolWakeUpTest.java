package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** Waking a pool's adder from its back-off never interrupts a connect under way. */
class PoolWakeUpTest {
  /** A data source whose connect waits, timed, as pgjdbc's does for its connect thread. */
  static final class SlowConnects implements DataSource {
    final CountDownLatch entered = new CountDownLatch(1);
    final AtomicBoolean interrupted = new AtomicBoolean();
    final Object lock = new Object();

    @Override
    public Connection getConnection() throws SQLException {
      entered.countDown();
      synchronized (lock) {
        try {
          lock.wait(10_000);
        } catch (InterruptedException e) {
          interrupted.set(true);
          Thread.currentThread().interrupt();
        }
      }
      throw new SQLException("no server here", "08001");
    }

    @Override public Connection getConnection(String u, String p) throws SQLException {
      return getConnection();
    }
    @Override public PrintWriter getLogWriter() { return null; }
    @Override public void setLogWriter(PrintWriter out) { }
    @Override public void setLoginTimeout(int seconds) { }
    @Override public int getLoginTimeout() { return 0; }
    @Override public Logger getParentLogger() { return Logger.getLogger("test"); }
    @Override public <T> T unwrap(Class<T> iface) { return null; }
    @Override public boolean isWrapperFor(Class<?> iface) { return false; }
  }

  @Test
  void aConnectUnderWayIsNotInterrupted() throws Exception {
    SlowConnects slow = new SlowConnects();
    HikariConfig hc = new HikariConfig();
    hc.setPoolName("wake-test");
    hc.setDataSource(slow);
    hc.setMaximumPoolSize(1);
    hc.setMinimumIdle(0);
    hc.setConnectionTimeout(250);
    hc.setInitializationFailTimeout(-1);
    try (HikariDataSource pool = new HikariDataSource(hc)) {
      Thread borrower = new Thread(() -> {
        try (Connection c = pool.getConnection()) {
          // not reached: no session comes
        } catch (SQLException expected) {
          // times out
        }
      });
      borrower.start();
      assertTrue(slow.entered.await(10, TimeUnit.SECONDS), "the adder connects");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!adderWaiting() && System.nanoTime() < deadline) Thread.onSpinWait();
      assertTrue(adderWaiting(), "the adder waits in its connect");
      PoolWakeUp.wake(pool);
      synchronized (slow.lock) {
        slow.lock.notifyAll();
      }
      borrower.join(10_000);
      assertFalse(slow.interrupted.get(), "the connect under way was interrupted");
    }
  }

  private static boolean adderWaiting() {
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("wake-test:connection-adder")
          && t.getState() == Thread.State.TIMED_WAITING) {
        return true;
      }
    }
    return false;
  }
}
