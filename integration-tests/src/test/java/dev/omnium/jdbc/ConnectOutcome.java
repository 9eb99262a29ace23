package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.zaxxer.hikari.pool.HikariPool;
import java.sql.SQLException;

/**
 * What one attempt to get a connection did: whether it connected, else the exception the
 * application got (its class, SQLState and message; for HikariCP's pool start, the
 * {@code PoolInitializationException} and its cause), and how long it took.
 *
 * @param connected whether it returned a connection (closed again at once)
 * @param type the exception's class, or null
 * @param sqlState the SQLState the application reads, or null
 * @param message the message, or null
 * @param millis how long the attempt took
 */
record ConnectOutcome(boolean connected, String type, String sqlState, String message,
    long millis) {
  /** Gets a connection (or a data source, or a pool): closed once it exists. */
  @FunctionalInterface
  interface Attempt {
    AutoCloseable open() throws Exception;
  }

  static ConnectOutcome of(Attempt attempt) {
    long t0 = System.nanoTime();
    try (AutoCloseable c = attempt.open()) {
      return new ConnectOutcome(true, null, null, null, elapsed(t0));
    } catch (Exception e) {
      long ms = elapsed(t0);
      Throwable t = e;
      String type = e.getClass().getName();
      if (e instanceof HikariPool.PoolInitializationException && e.getCause() != null) {
        t = e.getCause(); // what HikariCP's start reports: the driver's exception as its cause
        type = e.getClass().getSimpleName() + " caused by " + t.getClass().getName();
      }
      String state = t instanceof SQLException ? ((SQLException) t).getSQLState() : null;
      return new ConnectOutcome(false, type, state, t.getMessage(), ms);
    }
  }

  private static long elapsed(long t0) {
    return (System.nanoTime() - t0) / 1_000_000;
  }

  /** Fails unless both failed alike: same class, SQLState and message. */
  void assertSameFailureAs(ConnectOutcome oracle, String what) {
    assertFalse(oracle.connected, what + ": the oracle (pgjdbc) connected");
    assertFalse(connected, what + ": connected where pgjdbc failed with " + oracle);
    String both = what + " (pgjdbc: " + oracle + "; here: " + this + ")";
    assertEquals(oracle.type, type, both + ": exception class");
    assertEquals(oracle.sqlState, sqlState, both + ": SQLState");
    assertEquals(oracle.message, message, both + ": message");
  }

  @Override
  public String toString() {
    return connected ? "connected in " + millis + " ms"
        : type + " " + sqlState + " after " + millis + " ms: " + message;
  }
}
