package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.it.reliability.Readers;
import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.RouterBean;
import dev.omnium.sandbox.testkit.Sessions;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Real recovery conflicts: a short max_standby_streaming_delay on the replica plus TRUNCATE on the
 * primary while a replica transaction holds the table.
 */
class ConflictIT {
  private static final AtomicInteger APPS = new AtomicInteger();
  /** Holds t's lock on the replica long enough for the conflict to cancel it. */
  private static final String SLOW_READ = "SELECT pg_is_in_recovery(), inet_server_port(), "
      + "(SELECT count(*) FROM t), pg_sleep(3)";
  /** The replica cancels a query that holds replay back for more than 100 ms. */
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .setting("max_standby_streaming_delay", "100ms").setting("max_standby_archive_delay", "100ms")
      .sql("CREATE TABLE t (v int)", "INSERT INTO t SELECT generate_series(1, 100)").build();

  static String app() {
    return "conflict" + APPS.incrementAndGet();
  }

  static String url(String app) {
    return SANDBOX.url(app, "maxAge=5s&heartbeatInterval=200ms");
  }

  /** A connection of {@code app}, read-only, once its reads reach the replica. */
  static Connection openFresh(String app) throws Exception {
    return Readers.openFresh(url(app));
  }

  /** Waits until the replica runs the slow read of {@code app}, then truncates t on the primary. */
  static void truncateWhileTheReplicaReads(String app, String state) throws Exception {
    Poll.until(Duration.ofSeconds(10), "the replica session to hold t",
        () -> Sessions.inState(SANDBOX.cluster(), SANDBOX.replica(0), app + ":replica", state) > 0);
    if (state.equals("active")) {
      // the active session must have reached the slow statement, not a quick one
      Poll.until(Duration.ofSeconds(10), "the slow statement to run",
          () -> !"0".equals(SANDBOX.queryOne(SANDBOX.replica(0),
              "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
                  + " AND query LIKE '%pg_sleep(3)%' AND state = 'active'",
              app + ":replica")));
    }
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary()); Statement st = c.createStatement()) {
      st.execute("TRUNCATE t");
    }
  }

  @Test
  void anAutocommitStatementCancelledByRecoveryIsRetriedOnTheFallback() throws Exception {
    String app = app();
    try (Connection c = openFresh(app)) {
      long retriesBefore = RouterBean.of(app).getRetries();
      CompletableFuture<Where> read = CompletableFuture.supplyAsync(() -> {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(SLOW_READ)) {
          rs.next();
          return new Where(rs.getBoolean(1), rs.getInt(2), "", 0, false);
        } catch (SQLException e) {
          throw new RuntimeException(e);
        }
      });
      truncateWhileTheReplicaReads(app, "active");
      Where w = read.get(30, TimeUnit.SECONDS);
      assertFalse(w.inRecovery(), "the retry ran on the primary");
      assertEquals(SANDBOX.primary().port(), w.port());
      assertEquals(retriesBefore + 1, RouterBean.of(app).getRetries());
    }
  }

  @Test
  void theFirstStatementOfAReadOnlyTransactionIsRetriedAndTheTransactionStaysThere() throws Exception {
    String app = app();
    try (Connection c = openFresh(app)) {
      c.setAutoCommit(false);
      CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(SLOW_READ)) {
          rs.next();
          return rs.getBoolean(1);
        } catch (SQLException e) {
          throw new RuntimeException(e);
        }
      });
      truncateWhileTheReplicaReads(app, "active");
      assertFalse(first.get(30, TimeUnit.SECONDS), "the first statement was retried on the primary");
      Where second = Where.of(c);
      assertFalse(second.inRecovery(), "the rest of the transaction runs where the retry ran");
      assertEquals(app + ":fallback", second.applicationName());
      c.commit();
      assertEquals(1, RouterBean.of(app).getRetries());
    }
  }

  @Test
  void aLaterStatementSurfacesTheConflictAs40001() throws Exception {
    String app = app();
    try (Connection c = openFresh(app)) {
      c.setAutoCommit(false);
      assertTrue(Where.of(c).inRecovery(), "the transaction started on the replica");
      CompletableFuture<SQLException> second = CompletableFuture.supplyAsync(() -> {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(SLOW_READ)) {
          return null;
        } catch (SQLException e) {
          return e;
        }
      });
      truncateWhileTheReplicaReads(app, "active");
      SQLException e = second.get(30, TimeUnit.SECONDS);
      assertTrue(e != null, "the conflict reached the caller");
      assertEquals("40001", e.getSQLState());
      assertEquals(0, RouterBean.of(app).getRetries(), "not retried: results had reached the caller");
      c.rollback();
      assertTrue(Where.of(c).inRecovery(), "the next transaction is routed afresh");
      c.commit();
    }
  }

  @Test
  void aFatalConflictWhileIdleInTransactionEvictsTheConnection() throws Exception {
    String app = app();
    try (Connection c = openFresh(app)) {
      int pid = Readers.beginOnReplicaHoldingT(c);
      truncateWhileTheReplicaReads(app, "idle in transaction");
      Poll.until(Duration.ofSeconds(10), "the replica to terminate the idle session",
          () -> "0".equals(SANDBOX.queryOne(SANDBOX.replica(0),
              "SELECT count(*) FROM pg_stat_activity WHERE pid = ?", pid)));
      SQLException e = assertThrows(SQLException.class, () -> Where.of(c));
      assertTrue(e.getSQLState().startsWith("08") || e.getSQLState().equals("40001"), e.getSQLState());
      // the transaction is gone: the connection does not silently start a new one
      assertThrows(SQLException.class, () -> Where.of(c));
      c.rollback();
      Where next = Where.of(c);
      assertTrue(next.inRecovery());
      assertNotEquals(pid, next.pid(), "the dead session was evicted, not reused");
      c.commit();
    }
  }

  @Test
  void readWithRetryRerunsTheWholeUnitOnThePrimary() throws Exception {
    String app = app();
    try (OmniumDataSource db = new OmniumDataSource(url(app) + "&primaryPoolSize=2&replicaPoolSize=2")) {
      Poll.until(Duration.ofSeconds(10), "a fresh replica", () -> {
        try (OmniumConnection c = db.read()) {
          return Where.of(c).inRecovery();
        }
      });
      AtomicInteger attempts = new AtomicInteger();
      boolean ranOnReplica = db.readWithRetry(c -> {
        int attempt = attempts.incrementAndGet();
        boolean first = Where.of(c).inRecovery(); // results reach the work: no transparent retry after this
        CompletableFuture<Void> truncate = attempt == 1
            ? CompletableFuture.runAsync(() -> {
                try {
                  truncateWhileTheReplicaReads(app, "active");
                } catch (Exception e) {
                  throw new RuntimeException(e);
                }
              })
            : CompletableFuture.completedFuture(null);
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(SLOW_READ)) {
          rs.next();
          return first && rs.getBoolean(1);
        } finally {
          truncate.join();
        }
      });
      assertEquals(2, attempts.get(), "the unit of work ran twice");
      assertFalse(ranOnReplica, "the second run was on the primary");
      assertEquals(1, db.metrics().getRetries());
    }
  }
}
