package dev.omnium.it.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.jdbc.PgConnection;
import org.postgresql.replication.PGReplicationConnection;
import org.postgresql.util.PSQLException;

/**
 * pgjdbc's connection properties that set a connection's JDBC defaults ({@code readOnly},
 * {@code readOnlyMode}, {@code defaultRowFetchSize}), a replication connection, and the URL the
 * metadata reports: each checked through omnium against plain pgjdbc on the same cluster (the
 * oracle), and where omnium's work ran against what the servers saw (issue 32).
 */
class PgjdbcPropertiesIT {
  private static final AtomicInteger APPS = new AtomicInteger();
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE ro (id int)").build();
  static PgCluster cluster;

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
  }

  static String app() {
    return "pp" + APPS.incrementAndGet();
  }

  static Connection omnium(String app, String extra) throws SQLException {
    return DriverManager.getConnection(SANDBOX.url(app, "maxAge=5s&" + extra));
  }

  static Connection pgjdbc(String app, String extra) throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?ApplicationName=" + app + "&user=" + cluster.user() + "&"
        + extra);
  }

  static String insert(Connection c) {
    try (Statement st = c.createStatement()) {
      return "inserted " + st.executeUpdate("INSERT INTO ro VALUES (1)");
    } catch (SQLException e) {
      return "failed " + e.getSQLState();
    }
  }

  @Test
  void readOnlyModeTransactionLetsAutocommitWriteAndRoutesReadOnlyTransactions() throws Exception {
    String app = app();
    for (boolean viaOmnium : new boolean[] {false, true}) {
      try (Connection c = viaOmnium ? omnium(app, "readOnlyMode=transaction")
          : pgjdbc(app, "readOnlyMode=transaction")) {
        c.setReadOnly(true);
        assertTrue(c.isReadOnly());
        assertEquals("inserted 1", insert(c), "autocommit writes: pgjdbc's transaction mode");
        if (viaOmnium) {
          Where w = Where.of(c);
          assertFalse(w.inRecovery());
          assertEquals(app, w.applicationName(), "the primary session, not a read route");
        }
        c.setAutoCommit(false);
        assertEquals("failed 25006", insert(c), "a read-only transaction refuses it");
        c.rollback();
        if (viaOmnium) {
          // read-only transactions are read-only work: routed, here to the fresh replica
          Poll.until(Duration.ofSeconds(20), "a read-only transaction on the replica", () -> {
            try {
              return Where.of(c).inRecovery();
            } finally {
              c.rollback();
            }
          });
        }
      }
    }
  }

  @Test
  void readOnlyModeIgnoreRunsEverythingOnThePrimary() throws Exception {
    String app = app();
    for (boolean viaOmnium : new boolean[] {false, true}) {
      try (Connection c = viaOmnium ? omnium(app, "readOnlyMode=ignore")
          : pgjdbc(app, "readOnlyMode=ignore")) {
        c.setReadOnly(true);
        assertTrue(c.isReadOnly());
        assertEquals("inserted 1", insert(c));
        c.setAutoCommit(false);
        assertEquals("inserted 1", insert(c), "ignored in a transaction too");
        Where w = Where.of(c);
        assertFalse(w.inRecovery());
        assertEquals(app, w.applicationName());
        c.rollback();
      }
    }
  }

  @Test
  void readOnlyPropertyMakesTheConnectionReadOnlyButNeverItsPrimarySession() throws Exception {
    String app = app();
    try (Connection p = pgjdbc(app, "readOnly=true"); Connection o = omnium(app, "readOnly=true");
         Connection plain = omnium(app, "readOnly=false")) {
      assertTrue(p.isReadOnly());
      assertTrue(o.isReadOnly());
      assertFalse(plain.isReadOnly());
      assertTrue(Where.of(o).applicationName().startsWith(app + ":"), "routed as read-only work");
      o.setReadOnly(false);
      o.setAutoCommit(false);
      assertEquals("inserted 1", insert(o), "the primary session itself is read-write");
      o.rollback();
    }
  }

  @Test
  void defaultRowFetchSizeIsEveryStatementsAndANegativeOneFailsTheConnect() throws Exception {
    String app = app();
    for (boolean viaOmnium : new boolean[] {false, true}) {
      try (Connection c = viaOmnium ? omnium(app, "defaultRowFetchSize=13")
          : pgjdbc(app, "defaultRowFetchSize=13");
           Statement st = c.createStatement();
           PreparedStatement ps = c.prepareStatement("SELECT 1");
           CallableStatement cs = c.prepareCall("{ call unnest(array[1, 2]) }")) {
        assertEquals(13, st.getFetchSize());
        assertEquals(13, ps.getFetchSize());
        assertEquals(13, cs.getFetchSize());
        assertEquals(13, ((PGConnection) c).getDefaultFetchSize());
        ((PGConnection) c).setDefaultFetchSize(7);
        try (Statement later = c.createStatement()) {
          assertEquals(7, later.getFetchSize(), "from the connection's, when created");
          assertEquals(13, st.getFetchSize());
        }
      }
      SQLException e = assertThrows(SQLException.class, () -> {
        try (Connection c = viaOmnium ? omnium(app, "defaultRowFetchSize=-1")
            : pgjdbc(app, "defaultRowFetchSize=-1")) {
          c.getAutoCommit();
        }
      });
      assertEquals("22023", e.getSQLState());
      assertTrue(e instanceof PSQLException, e.getClass().getName());
    }
  }

  @Test
  void aReplicationConnectionIsPgjdbcsOwnOnThePrimary() throws Exception {
    String app = app();
    String props = "replication=database&preferQueryMode=simple&assumeMinServerVersion=9.4";
    try (Connection c = omnium(app, props)) {
      assertTrue(c instanceof PgConnection, c.getClass().getName());
      PGReplicationConnection replication = ((PGConnection) c).getReplicationAPI();
      replication.createReplicationSlot().physical().withSlotName("pp_slot").make();
      try (Connection admin = cluster.connect(cluster.primary()); Statement st =
          admin.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM"
              + " pg_stat_activity WHERE backend_type = 'walsender' AND application_name = '"
              + app + "'")) {
        rs.next();
        assertEquals(1, rs.getInt(1), "a walsender on the primary, not a routed session");
      }
      replication.dropReplicationSlot("pp_slot");
    }
  }

  @Test
  void theMetadataUrlIsTheOneConnectedWithPasswordsMasked() throws Exception {
    String url = SANDBOX.url(app(), "maxAge=5s&password=s3cret&defaultRowFetchSize=3");
    try (Connection c = DriverManager.getConnection(url)) {
      String reported = c.getMetaData().getURL();
      assertEquals(url.replace("password=s3cret", "password=***"), reported);
    }
  }
}
