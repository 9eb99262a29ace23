package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgClusterLogsOnFailure;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replica session's reads block without a kernel timer; its socketTimeout is kept by the
 * {@code omnium-read-deadlines} thread. A read in flight when the replica freezes (SIGSTOP: TCP
 * open, nothing answers) must still end at that bound, with what plain pgjdbc with the same
 * socketTimeout reports, and the session must be gone from the server afterwards.
 */
@ExtendWith(PgClusterLogsOnFailure.class)
class ReadDeadlinesIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();

  /** replicaStatementTimeout 2 s + clientTimeoutMargin 1 s: the replica sessions' socketTimeout. */
  private static final int BOUND_SECONDS = 3;

  @Test
  void aReadInFlightOnAFrozenReplicaEndsAtTheBoundAsPgjdbcsDoes() throws Exception {
    // heartbeatInterval 2 s: the lag watcher gives up on the frozen replica only after 6 s
    // (3 intervals), so nothing but the read's own bound ends it first.
    String url = SANDBOX.url("deadline", "maxAge=120s&heartbeatInterval=2s&replicaStatementTimeout=2s"
        + "&clientTimeoutMargin=1s&replicaPoolSize=1");
    Properties plainProps = new Properties();
    plainProps.setProperty("socketTimeout", Integer.toString(BOUND_SECONDS));
    plainProps.setProperty("ApplicationName", "deadline-pgjdbc");
    ExecutorService pool = Executors.newFixedThreadPool(2);
    Connection omnium = DriverManager.getConnection(url);
    Connection plain = SANDBOX.cluster().connect(SANDBOX.replica(), plainProps);
    boolean frozen = false;
    int pid;
    try {
      omnium.setReadOnly(true);
      omnium.setAutoCommit(false);
      plain.setReadOnly(true);
      plain.setAutoCommit(false);
      Poll.until(Duration.ofSeconds(20), "a read-only transaction on the replica", () -> {
        omnium.rollback();
        return Where.of(omnium).inRecovery();
      });
      Where w = Where.of(omnium); // the same transaction: the same replica session
      pid = w.pid();
      assertTrue(Where.of(plain).inRecovery());
      assertTrue(threadAlive("omnium-read-deadlines"), "the replica session's timeout is the watchdog's");

      SANDBOX.cluster().freeze(SANDBOX.replica());
      frozen = true;
      long start = System.nanoTime();
      Future<SQLException> viaOmnium = pool.submit(() -> FrozenServers.failureOf(omnium));
      Future<SQLException> viaPgjdbc = pool.submit(() -> FrozenServers.failureOf(plain));
      SQLException oe = FrozenServers.within(viaOmnium, "the omnium read");
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      SQLException pe = FrozenServers.within(viaPgjdbc, "the pgjdbc read");
      System.out.println("FIGURE frozen replica, socketTimeout " + BOUND_SECONDS + " s kept by the watchdog:"
          + " the read failed after " + millis + " ms (" + oe.getSQLState() + "; pgjdbc " + pe.getSQLState() + ")");
      assertEquals(pe.getSQLState(), oe.getSQLState(), "the SQLState pgjdbc reports: " + oe + " / " + pe);
      assertEquals("08006", oe.getSQLState(), oe.toString());
      assertNotNull(cause(pe, SocketTimeoutException.class), "pgjdbc's own read timed out: " + pe);
      assertNotNull(cause(oe, SocketTimeoutException.class), "a read timeout, as pgjdbc's: " + chain(oe));
      assertTrue(millis >= TimeUnit.SECONDS.toMillis(BOUND_SECONDS),
          "failed after " + millis + " ms, before the " + BOUND_SECONDS + " s bound");
    } finally {
      if (frozen) SANDBOX.cluster().thaw(SANDBOX.replica());
      pool.shutdownNow();
      FrozenServers.closeQuietly(omnium);
      FrozenServers.closeQuietly(plain);
    }
    // The client closed the timed-out session: its backend ends once it runs again.
    Poll.until(Duration.ofSeconds(30), "the timed-out session gone from the replica", () ->
        "0".equals(SANDBOX.queryOne(SANDBOX.replica(),
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ?", pid)));
    // and reads return to the replica on a new session
    try (Connection c = DriverManager.getConnection(url)) {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(30), "reads back on a new replica session", () -> {
        Where after = Where.of(c);
        return after.inRecovery() && after.pid() != pid;
      });
    }
  }

  private static String chain(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) b.append(c).append(" <- ");
    return b.toString();
  }

  private static boolean threadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.isAlive() && t.getName().equals(name));
  }

  private static <T extends Throwable> T cause(Throwable t, Class<T> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) return type.cast(c);
    }
    return null;
  }
}
