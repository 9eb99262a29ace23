package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * Read-your-writes remembers every write that commits, whichever call committed it, and a commit
 * no sample of the primary's position can date is read on the primary until one can. The
 * application runs as an ordinary (non-superuser) role, so the test can make the router's position
 * sampler fail by revoking EXECUTE on {@code pg_current_wal_insert_lsn()}.
 */
class ReadYourWritesRecordingIT {
  private static final AtomicLong IDS = new AtomicLong();
  private static final String APP_ROLE = "omnium_app";

  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).sql(
      "CREATE TABLE rec (id bigint PRIMARY KEY)",
      "CREATE TABLE rec_deferred (id bigint, UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)",
      "CREATE ROLE " + APP_ROLE + " LOGIN",
      "GRANT ALL ON rec, rec_deferred TO " + APP_ROLE).build();

  static PgCluster cluster;

  @BeforeEach
  void grantHeartbeat() throws Exception {
    cluster = SANDBOX.cluster();
    admin("GRANT SELECT ON replica_heartbeat TO " + APP_ROLE);
    SANDBOX.awaitCaughtUp();
  }

  @AfterEach
  void restore() throws Exception {
    admin("GRANT EXECUTE ON FUNCTION pg_current_wal_insert_lsn() TO PUBLIC");
    cluster.resumeReplay(cluster.replica(0));
    cluster.awaitCaughtUp(cluster.replica(0));
  }

  static void admin(String sql) throws SQLException {
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /** A long TTL: a remembered position must be replaced, not merely expire. */
  static String url(String app) {
    return "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?replica=" + cluster.replica(0).hostPort() + "&applicationName=" + app
        + "&maxAge=120s&heartbeatInterval=100ms&readYourWrites=thread&readYourWritesTtl=10m"
        + "&user=" + APP_ROLE;
  }

  /** Waits until reads of this configuration reach the replica; then, if asked, pauses its replay. */
  static void awaitReplicaReads(String url, boolean thenPause) throws Exception {
    Poll.until(Duration.ofSeconds(20), "a fresh replica", () -> {
      try (Connection c = DriverManager.getConnection(url)) {
        c.setReadOnly(true);
        return Where.of(c).inRecovery();
      }
    });
    if (thenPause) cluster.pauseReplay(cluster.replica(0));
  }

  /** An autocommit INSERT ... RETURNING id of row {@code id}, ready to run. */
  static PreparedStatement insertReturning(Connection c, long id) throws SQLException {
    PreparedStatement ps = c.prepareStatement("INSERT INTO rec VALUES (?) RETURNING id");
    ps.setLong(1, id);
    return ps;
  }

  /** A connection of application {@code app} once its reads reach the replica (see above). */
  static Connection connectOnceReplicaReads(String app, boolean thenPause) throws Exception {
    String url = url(app);
    awaitReplicaReads(url, thenPause);
    return DriverManager.getConnection(url);
  }

  /** Reads the row back read-only, asserts {@code what} saw it; whether the replica served it. */
  static boolean seenOnReplica(Connection c, long id, String what) throws SQLException {
    boolean[] r = readBack(c, id);
    assertTrue(r[0], what + " (ran on the replica: " + r[1] + ")");
    return r[1];
  }

  static void insert(Connection c, long id) throws SQLException {
    c.setReadOnly(false);
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO rec VALUES (?)")) {
      ps.setLong(1, id);
      assertEquals(1, ps.executeUpdate());
    }
  }

  /** Reads the row back read-only: {seen, ranOnTheReplica}, as the server reports it. */
  static boolean[] readBack(Connection c, long id) throws SQLException {
    try {
      return ReadYourWritesIT.readBack(c, "rec", id);
    } finally {
      c.setReadOnly(false);
    }
  }

  static long primaryInsertPosition() throws SQLException {
    try (Connection c = cluster.connect(cluster.primary()); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT (pg_current_wal_insert_lsn() - '0/0')::text")) {
      rs.next();
      return Long.parseLong(rs.getString(1));
    }
  }

  static long tokenPosition(String token) {
    String lsn = token.substring(token.lastIndexOf(':') + 1);
    int slash = lsn.indexOf('/');
    return (Long.parseLong(lsn.substring(0, slash), 16) << 32) | Long.parseLong(lsn.substring(slash + 1), 16);
  }

  @Test
  void aCommitNoSampleCanDateIsReadOnThePrimaryUntilOneCan() throws Exception {
    String url = url("rec-replaced");
    try (Connection c = connectOnceReplicaReads("rec-replaced", false)) {
      admin("REVOKE EXECUTE ON FUNCTION pg_current_wal_insert_lsn() FROM PUBLIC");
      long first = IDS.incrementAndGet();
      insert(c, first); // commits; the router's sampler cannot read the primary's position now
      // The replica has the row and is fresh (maxAge 120 s) for readers that wrote nothing, and
      // several sampling rounds (heartbeatInterval 100 ms) have failed since the commit.
      cluster.awaitCaughtUp(cluster.replica(0));
      Thread.sleep(1000);
      boolean[] otherReads = new boolean[1];
      Thread other = new Thread(() -> {
        try (Connection o = DriverManager.getConnection(url)) {
          o.setReadOnly(true);
          otherReads[0] = Where.of(o).inRecovery();
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
      other.start();
      other.join();
      assertTrue(otherReads[0], "a thread without writes still reads on the replica");
      boolean[] unknown = readBack(c, first);
      assertTrue(unknown[0], "a write whose position is unknown is read where it is certain: " + unknown[1]);
      assertFalse(unknown[1], "so the primary serves that read");

      admin("GRANT EXECUTE ON FUNCTION pg_current_wal_insert_lsn() TO PUBLIC");
      long second = IDS.incrementAndGet();
      insert(c, second);
      String token = c.unwrap(OmniumConnection.class).lastWriteToken();
      assertNotNull(token);
      long now = primaryInsertPosition();
      assertTrue(Long.compareUnsigned(tokenPosition(token), now) <= 0,
          "the token names a real position (" + token + "), not one past the primary's end");

      cluster.awaitCaughtUp(cluster.replica(0));
      Poll.until(Duration.ofSeconds(20), "this thread's reads back on the replica", () -> {
        boolean[] r = readBack(c, second);
        return r[0] && r[1];
      });
      assertTrue(readBack(c, first)[0]);
    }
  }

  @Test
  void autocommitInsertReturningThroughExecuteQueryIsRemembered() throws Exception {
    try (Connection c = connectOnceReplicaReads("rec-query", true)) {
      long id = IDS.incrementAndGet();
      try (PreparedStatement ps = insertReturning(c, id)) {
        try (ResultSet rs = ps.executeQuery()) {
          assertTrue(rs.next());
          assertEquals(id, rs.getLong(1));
        }
      }
      assertFalse(seenOnReplica(c, id, "the read saw the write made through executeQuery"));
    }
  }

  @Test
  void autocommitInsertReturningThroughExecuteIsRemembered() throws Exception {
    try (Connection c = connectOnceReplicaReads("rec-execute", true)) {
      long id = IDS.incrementAndGet();
      try (PreparedStatement ps = insertReturning(c, id)) {
        assertTrue(ps.execute(), "a result set");
      }
      seenOnReplica(c, id, "prepared execute(): the read saw the write");

      long id2 = IDS.incrementAndGet();
      try (Statement st = c.createStatement()) {
        assertTrue(st.execute("INSERT INTO rec VALUES (" + id2 + ") RETURNING id"));
      }
      assertFalse(seenOnReplica(c, id2, "Statement.execute(String): the read saw the write"));
    }
  }

  /** COPY through pgjdbc's API (issue 32): unwrap(PGConnection) and a cast alike. */
  @Test
  void anAutocommitCopyThroughPgjdbcsApiIsRemembered() throws Exception {
    try (Connection c = connectOnceReplicaReads("rec-copy", true)) {
      long id = IDS.incrementAndGet();
      long copied = c.unwrap(PGConnection.class).getCopyAPI()
          .copyIn("COPY rec FROM STDIN", new StringReader(id + "\n"));
      assertEquals(1, copied);
      assertFalse(seenOnReplica(c, id, "the read saw the row COPY wrote (unwrap)"));

      long id2 = IDS.incrementAndGet();
      CopyIn in = ((PGConnection) c).getCopyAPI().copyIn("COPY rec FROM STDIN");
      byte[] row = (id2 + "\n").getBytes(StandardCharsets.US_ASCII);
      in.writeToCopy(row, 0, row.length);
      assertEquals(1, in.endCopy());
      assertFalse(seenOnReplica(c, id2, "the read saw the row a low-level COPY wrote (cast)"));
    }
  }

  @Test
  void aCommitMadeBySetAutoCommitTrueIsRemembered() throws Exception {
    try (Connection c = connectOnceReplicaReads("rec-setautocommit", true)) {
      long id = IDS.incrementAndGet();
      c.setAutoCommit(false);
      insert(c, id);
      c.setAutoCommit(true); // commits, as with pgjdbc
      assertFalse(seenOnReplica(c, id, "the read saw the write committed by setAutoCommit(true)"));
    }
    try (Connection plain = cluster.connect(cluster.primary()); Statement st = plain.createStatement();
         ResultSet rs = st.executeQuery("SELECT count(*) FROM rec WHERE id = " + IDS.get())) {
      rs.next();
      assertEquals(1, rs.getInt(1), "committed on the primary");
    }
  }

  @Test
  void aCommitTheServerRefusesFailsAsWithPgjdbcAndRecordsNothing() throws Exception {
    String url = url("rec-refused");
    awaitReplicaReads(url, false);
    long id = IDS.incrementAndGet();
    String expectedState;
    try (Connection plain = cluster.connect(cluster.primary())) {
      plain.setAutoCommit(false);
      try (Statement st = plain.createStatement()) {
        st.execute("INSERT INTO rec_deferred VALUES (" + id + "), (" + id + ")");
      }
      expectedState = assertThrows(SQLException.class, plain::commit).getSQLState();
    }
    try (Connection c = DriverManager.getConnection(url)) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("INSERT INTO rec_deferred VALUES (" + id + "), (" + id + ")");
      }
      SQLException e = assertThrows(SQLException.class, c::commit);
      assertEquals(expectedState, e.getSQLState(), "the deferred check fails the commit: " + e);
      assertEquals(null, c.unwrap(OmniumConnection.class).lastWriteToken(), "nothing committed");
      // the connection goes on as pgjdbc's does: the next transaction starts afresh
      insert(c, id);
      c.commit();
      assertNotNull(c.unwrap(OmniumConnection.class).lastWriteToken());
    }
    try (Connection plain = cluster.connect(cluster.primary()); Statement st = plain.createStatement();
         ResultSet rs = st.executeQuery("SELECT (SELECT count(*) FROM rec_deferred WHERE id = " + id
             + "), (SELECT count(*) FROM rec WHERE id = " + id + ")")) {
      rs.next();
      assertEquals(0, rs.getInt(1), "the refused transaction left nothing");
      assertEquals(1, rs.getInt(2));
    }
  }
}
