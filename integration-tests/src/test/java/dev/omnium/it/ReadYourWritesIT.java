package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Read-your-writes on a replica whose replay is paused: by time the replica is fresh enough
 * (maxAge is large), but it lacks the write a thread just made.
 */
class ReadYourWritesIT {
  private static final AtomicLong IDS = new AtomicLong();
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).healAfterEach()
      .sql("CREATE TABLE rw (id bigint PRIMARY KEY)").build();

  static String url(String app, String mode) {
    return SANDBOX.url(app, "maxAge=120s&heartbeatInterval=100ms&readYourWrites=" + mode);
  }

  /** The URL of {@code app} with {@code params}, once its reads are served by the replica. */
  static String freshUrl(String app, String params, int seconds) throws Exception {
    String url = SANDBOX.url(app, params);
    awaitFresh(url, seconds);
    return url;
  }

  /** Waits until reads of {@code url} are served by the replica. */
  private static void awaitFresh(String url, int seconds) throws Exception {
    Poll.until(Duration.ofSeconds(seconds), "a fresh replica", () -> {
      try (Connection c = DriverManager.getConnection(url)) {
        c.setReadOnly(true);
        return Where.of(c).inRecovery();
      }
    });
  }

  /** Waits until reads of this configuration are served by the replica, then pauses its replay. */
  static void pauseWithTheReplicaStillFresh(String url) throws Exception {
    awaitFresh(url, 10);
    SANDBOX.cluster().pauseReplay(SANDBOX.replica(0));
  }

  static void write(Connection c, long id) throws SQLException {
    c.setReadOnly(false);
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO rw VALUES (?)")) {
      ps.setLong(1, id);
      ps.executeUpdate();
    }
  }

  static boolean[] readBack(Connection c, long id) throws SQLException {
    return readBack(c, "rw", id);
  }

  /** Reads row {@code id} of {@code table} back read-only: {seen, ranOnTheReplica} (the server's). */
  static boolean[] readBack(Connection c, String table, long id) throws SQLException {
    c.setReadOnly(true);
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT EXISTS (SELECT 1 FROM " + table + " WHERE id = ?), pg_is_in_recovery()")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new boolean[] {rs.getBoolean(1), rs.getBoolean(2)};
      }
    }
  }

  /** Pauses replay with the replica fresh (above), then runs {@link #writeThenRead}; all pairs ran. */
  static long[] writeThenReadPaused(String url, int threads, int pairsPerThread) throws Exception {
    pauseWithTheReplicaStillFresh(url);
    long[] r = writeThenRead(url, threads, pairsPerThread);
    assertEquals((long) threads * pairsPerThread, r[0]);
    return r;
  }

  /** Runs write→read pairs on several threads; returns {pairs, misses, replicaReads}. */
  static long[] writeThenRead(String url, int threads, int pairsPerThread) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<long[]>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        results.add(pool.submit(() -> {
          long misses = 0;
          long onReplica = 0;
          try (Connection c = DriverManager.getConnection(url)) {
            for (int i = 0; i < pairsPerThread; i++) {
              long id = IDS.incrementAndGet();
              write(c, id);
              boolean[] r = readBack(c, id);
              if (!r[0]) misses++;
              if (r[1]) onReplica++;
            }
          }
          return new long[] {misses, onReplica};
        }));
      }
      long misses = 0;
      long onReplica = 0;
      for (Future<long[]> f : results) {
        misses += f.get()[0];
        onReplica += f.get()[1];
      }
      return new long[] {(long) threads * pairsPerThread, misses, onReplica};
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void withoutTheFeatureReadsAfterOwnWritesMissOnALaggingReplica() throws Exception {
    long[] r = writeThenReadPaused(url("rywoff", "off"), 2, 25);
    assertTrue(r[1] > 0, "the control shows misses (so the checker can fail): " + r[1]);
  }

  @Test
  void threadModeNeverMissesAndOtherThreadsStayOnTheReplica() throws Exception {
    String url = url("rywthread", "thread");
    long[] r = writeThenReadPaused(url, 4, 250);
    assertEquals(0, r[1], "every read saw its own write");
    assertEquals(0, r[2], "with replay paused, those reads could only be served by the primary");

    // a thread that never wrote is not sent to the fallback by this feature
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      boolean onReplica = other.submit(() -> {
        try (Connection c = DriverManager.getConnection(url)) {
          c.setReadOnly(true);
          return Where.of(c).inRecovery();
        }
      }).get();
      assertTrue(onReplica, "reads of threads without writes stay on the replica");
    } finally {
      other.shutdownNow();
    }
  }

  @Test
  void aTokenCarriesTheWriteToAnotherThreadAndConnection() throws Exception {
    try (OmniumDataSource db = new OmniumDataSource(url("rywtoken", "token") + "&primaryPoolSize=2&replicaPoolSize=2")) {
      // This data source's own router must have seen the replica fresh before replay stops: lag
      // is measured against primary positions it sampled, so it cannot date an older position.
      Poll.until(Duration.ofSeconds(10), "a fresh replica for the data source", () -> {
        try (OmniumConnection c = db.read()) {
          return Where.of(c).inRecovery();
        }
      });
      pauseWithTheReplicaStillFresh(url("rywtoken", "token"));
      long id = IDS.incrementAndGet();
      String token;
      try (OmniumConnection c = db.write()) {
        write(c, id);
        token = c.lastWriteToken();
      }
      assertNotNull(token);
      assertEquals(token, db.lastWriteToken(), "the data source remembers the thread's last write");
      ExecutorService other = Executors.newSingleThreadExecutor();
      try {
        boolean[] withToken = other.submit(() -> {
          try (OmniumConnection c = db.read(Duration.ofSeconds(120), token)) {
            return readBack(c, id);
          }
        }).get();
        assertTrue(withToken[0], "the reader with the token sees the write");
        assertFalse(withToken[1], "served by the primary while the replica lacks it");
        boolean[] viaClientInfo = other.submit(() -> {
          try (OmniumConnection c = db.read()) {
            c.setClientInfo(OmniumConnection.WRITE_TOKEN_CLIENT_INFO, token);
            return readBack(c, id);
          }
        }).get();
        assertTrue(viaClientInfo[0]);
        boolean[] without = other.submit(() -> {
          try (OmniumConnection c = db.read(Duration.ofSeconds(120))) {
            return readBack(c, id);
          }
        }).get();
        assertFalse(without[0], "token mode: without the token the lagging replica serves the read");
        assertTrue(without[1]);

        SANDBOX.cluster().resumeReplay(SANDBOX.replica(0));
        SANDBOX.cluster().awaitCaughtUp(SANDBOX.replica(0));
        Poll.until(Duration.ofSeconds(10), "the token's reads to return to the replica", () -> other.submit(() -> {
          try (OmniumConnection c = db.read(Duration.ofSeconds(120), token)) {
            boolean[] r = readBack(c, id);
            return r[0] && r[1];
          }
        }).get());
      } finally {
        other.shutdownNow();
      }
    }
  }

  @Test
  void afterTheReplicaCatchesUpRememberedReadsGoBackToIt() throws Exception {
    String url = url("rywback", "thread");
    pauseWithTheReplicaStillFresh(url);
    try (Connection c = DriverManager.getConnection(url)) {
      long id = IDS.incrementAndGet();
      write(c, id);
      boolean[] r = readBack(c, id);
      assertTrue(r[0]);
      assertFalse(r[1], "not replayed yet: the primary served it");
      SANDBOX.cluster().resumeReplay(SANDBOX.replica(0));
      SANDBOX.cluster().awaitCaughtUp(SANDBOX.replica(0));
      Poll.until(Duration.ofSeconds(10), "reads back on the replica", () -> {
        boolean[] again = readBack(c, id);
        return again[0] && again[1];
      });
    }
  }

  @Test
  void theSampleThatDatesAWriteIsTakenAtOnceNotAtTheNextInterval() throws Exception {
    // Scheduled samples of the primary's position are 20 s apart here: a read after the write is
    // back on the caught-up replica long before the next scheduled one could date the write.
    String url = freshUrl("rywsoon",
        "maxAge=300s&heartbeatInterval=20s&readYourWrites=thread&readYourWritesTtl=10m", 60);
    try (Connection c = DriverManager.getConnection(url)) {
      long id = IDS.incrementAndGet();
      write(c, id);
      SANDBOX.awaitCaughtUp();
      Poll.until(Duration.ofSeconds(5), "the read after the write back on the replica", () -> {
        boolean[] r = readBack(c, id);
        assertTrue(r[0], "a read after the write saw it");
        return r[1];
      });
    }
  }

  /**
   * A read whose write no replica's sample shows yet first asks a fresh replica's session for its
   * replay position. That question is a unit of work of its own: the reader's repeatable-read
   * transaction then begins on the replica with its own isolation, as with pgjdbc.
   */
  @Test
  void aPositionCheckIsNoPartOfTheReadersTransaction() throws Exception {
    String app = "rywcheck";
    // the replica's replay position is sampled 20 s apart: a read soon after a write asks it
    String url = freshUrl(app,
        "maxAge=300s&heartbeatInterval=20s&readYourWrites=thread&readYourWritesTtl=10m", 60);
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    ObjectName router = new ObjectName("dev.omnium:type=Router,name=" + app);
    try (Connection c = DriverManager.getConnection(url)) {
      long checksBefore = (Long) jmx.getAttribute(router, "WritePositionChecks");
      long checks = checksBefore;
      // a scheduled sample of the replica may show the write first: then try again
      for (int attempt = 0; attempt < 5 && checks == checksBefore; attempt++) {
        long id = IDS.incrementAndGet();
        write(c, id);
        SANDBOX.awaitCaughtUp();
        // the first read after the write takes the fallback while the write is undated
        Poll.until(Duration.ofSeconds(10), "a read back on the replica",
            () -> repeatableRead(c, id));
        checks = (Long) jmx.getAttribute(router, "WritePositionChecks");
      }
      assertTrue(checks > checksBefore, "a read asked the replica for its position");
    }
  }

  /** Reads row {@code id} back in a read-only repeatable-read transaction: on the replica? */
  private static boolean repeatableRead(Connection c, long id) throws SQLException {
    c.setReadOnly(true);
    c.setAutoCommit(false);
    c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    try {
      // pgjdbc refuses to set the isolation in the middle of a transaction: had the check begun
      // the reader's, this would fail
      boolean[] r = readBack(c, id);
      assertTrue(r[0], "the read saw the write");
      try (Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT current_setting('transaction_isolation')")) {
        assertTrue(rs.next());
        assertEquals("repeatable read", rs.getString(1));
      }
      return r[1];
    } finally {
      c.commit();
      c.setAutoCommit(true);
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
  }

  /**
   * What the primary itself logged ({@code log_statement=all}) while one thread made write→read
   * pairs: no position query from the application's sessions, and the sampler's queries bounded
   * by one per 10 ms plus its schedule, however many commits asked for a sample.
   */
  @Test
  void aCommitSendsNothingMoreAndTheSamplerStaysBounded() throws Exception {
    String url = freshUrl("rywwire", "maxAge=120s&heartbeatInterval=1s&readYourWrites=thread", 20);
    setLogStatement("all");
    long sampled;
    long others;
    double seconds;
    int pairs = 300;
    try (Connection c = DriverManager.getConnection(url)) {
      long samplerBefore = logged(SAMPLER_QUERY);
      long allBefore = logged("pg_current_wal_insert_lsn");
      long t0 = System.nanoTime();
      for (int i = 0; i < pairs; i++) {
        long id = IDS.incrementAndGet();
        if (i % 2 == 0) {
          write(c, id); // autocommit
        } else {
          c.setReadOnly(false);
          c.setAutoCommit(false);
          write(c, id);
          c.commit();
          c.setAutoCommit(true);
        }
        assertTrue(readBack(c, id)[0], "a read after the write saw it");
      }
      seconds = (System.nanoTime() - t0) / 1e9;
      Poll.pause(300); // the last lines reach the log
      sampled = logged(SAMPLER_QUERY) - samplerBefore;
      others = logged("pg_current_wal_insert_lsn") - allBefore - sampled;
    } finally {
      setLogStatement(null);
    }
    assertEquals(0, others, "no position query besides the sampler's");
    assertTrue(sampled >= 1, "commits were dated by samples");
    long bound = (long) Math.ceil(seconds / 0.010) + (long) Math.ceil(seconds / 1.0) + 3;
    assertTrue(sampled <= bound, sampled + " sampler queries in " + seconds + " s for " + pairs
        + " commits: more than one per 10 ms (" + bound + ")");
  }

  /**
   * A thread that writes and never reads back costs the sampler nothing beyond its schedule: the
   * primary's own log shows one sampler query per interval, not one per 10 ms of commits.
   */
  @Test
  void writesThatAreNotReadBackAskTheSamplerForNothing() throws Exception {
    String url = freshUrl("rywonly", "maxAge=120s&heartbeatInterval=1s&readYourWrites=thread", 20);
    setLogStatement("all");
    long sampled;
    double seconds;
    long last = 0;
    try (Connection c = DriverManager.getConnection(url)) {
      long before = logged(SAMPLER_QUERY);
      long t0 = System.nanoTime();
      for (int i = 0; i < 400; i++) {
        last = IDS.incrementAndGet();
        if (i % 2 == 0) {
          write(c, last); // autocommit
        } else {
          c.setAutoCommit(false);
          write(c, last);
          c.commit();
          c.setAutoCommit(true);
        }
      }
      seconds = (System.nanoTime() - t0) / 1e9;
      Poll.pause(300); // the last lines reach the log
      sampled = logged(SAMPLER_QUERY) - before;
      assertTrue(readBack(c, last)[0], "the writes are still remembered: a read sees the last");
    } finally {
      setLogStatement(null);
    }
    long bound = (long) Math.ceil(seconds + 0.3) + 2; // the schedule, and a round either side
    assertTrue(sampled <= bound, sampled + " sampler queries in " + seconds + " s of writes"
        + " without a read: more than the 1 s schedule (" + bound + ")");
  }

  private static final String SAMPLER_QUERY =
      "pg_current_wal_insert_lsn()::text, extract(epoch FROM clock_timestamp())";

  /** Occurrences of {@code needle} in the primary's log so far. */
  private static long logged(String needle) throws Exception {
    String log = Files.readString(SANDBOX.primary().logFile());
    long n = 0;
    for (int i = log.indexOf(needle); i >= 0; i = log.indexOf(needle, i + 1)) n++;
    return n;
  }

  private static void setLogStatement(String value) throws Exception {
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary());
         Statement st = c.createStatement()) {
      st.execute(value == null ? "ALTER SYSTEM RESET log_statement"
          : "ALTER SYSTEM SET log_statement = '" + value + "'");
      st.execute("SELECT pg_reload_conf()");
    }
    Poll.pause(300); // the postmaster signals the reload to every backend
  }
}
