package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;

/**
 * Suite 8, leaks, on purpose: every suite ends with {@link Leaks#assertQuiescent} and
 * {@link Leaks#assertGone}; this one drives the paths most likely to leak (statements and result
 * sets left open, transactions left open at close, errors inside read-only and read-write
 * transactions, readWithRetry, COPY through unwrap, abort) in driver and DataSource mode, and first
 * shows that the check does see connections still held.
 */
@ExtendWith(LogScanned.class)
class LeaksIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = SecretScan.sandbox(1)
      .sql("CREATE TABLE items (id int PRIMARY KEY, name text)",
          "INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 100) g").build();

  static String url(String app) {
    return SANDBOX.url(app, "maxAge=2s&heartbeatInterval=100ms&replicaPoolSize=3&fallbackPoolSize=2"
        + "&primaryPoolSize=3&poolTimeout=2s");
  }

  /** Exercises one logical connection through the leak-prone paths, then closes it (or aborts it). */
  static void exercise(Connection c, int i, int copyBase) throws Exception {
    c.setReadOnly(false); // db.read() hands out read-only connections; the work starts read-write
    // read-write work, a statement and a result set left open
    Statement left = c.createStatement();
    ResultSet open = left.executeQuery("SELECT id FROM items");
    open.next();
    try (PreparedStatement ps = c.prepareStatement("UPDATE items SET name = ? WHERE id = ?")) {
      ps.setString(1, "touched " + i);
      ps.setInt(2, 1 + i % 100);
      ps.executeUpdate();
    }
    // an error inside a read-write transaction, left open
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.executeUpdate("UPDATE items SET name = name WHERE id = 1");
      assertThrows(SQLException.class, () -> st.execute("SELEC broken"));
    }
    c.rollback();
    c.setAutoCommit(true);
    // read-only autocommit with an open result set, then a read-only transaction left open at close
    c.setReadOnly(true);
    Statement ro = c.createStatement();
    ResultSet roOpen = ro.executeQuery("SELECT id FROM items");
    roOpen.next();
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.executeQuery("SELECT count(*) FROM items").close();
      SQLException e = assertThrows(SQLException.class, () -> st.executeUpdate("DELETE FROM items"));
      assertTrue("25006".equals(e.getSQLState()), e.getSQLState());
    }
    if (i % 3 == 0) {
      c.rollback();
      c.setAutoCommit(true);
      c.setReadOnly(false);
      // COPY through unwrap binds the primary
      long copied = c.unwrap(PGConnection.class).getCopyAPI()
          .copyIn("COPY items (id, name) FROM STDIN WITH (FORMAT csv)", new StringReader((copyBase + i) + ",copied\n"));
      assertTrue(copied == 1);
    }
    if (i % 5 == 4) {
      c.abort(Runnable::run);
    } else {
      c.close();
    }
  }

  @Test
  void driverModeLeavesNothingBehind() throws Exception {
    String app = "leakdriver";
    String url = url(app);
    try (Connection probe = Readers.openFresh(url)) {
      // The check sees what is held: a read-only transaction open on the replica is not quiescent.
      probe.setAutoCommit(false);
      try (Statement st = probe.createStatement()) {
        st.executeQuery("SELECT 1").close();
      }
      assertNotNull(Leaks.quiescenceProblem(SANDBOX.cluster(), app), "the leak check did not see a replica connection in use");
      probe.rollback();
    }
    List<Connection> many = new ArrayList<>();
    for (int i = 0; i < 20; i++) many.add(DriverManager.getConnection(url));
    for (int i = 0; i < many.size(); i++) exercise(many.get(i), i, 1000);
    Leaks.assertQuiescent(SANDBOX.cluster(), app);
    OmniumDriver.shutdown();
    Leaks.assertGone(SANDBOX.cluster(), app);
  }

  @Test
  void dataSourceModeLeavesNothingBehind() throws Exception {
    String app = "leakds";
    try (OmniumDataSource db = new OmniumDataSource(url(app))) {
      try (OmniumConnection probe = db.write()) {
        probe.setAutoCommit(false);
        try (Statement st = probe.createStatement()) {
          st.executeUpdate("UPDATE items SET name = name WHERE id = 2");
        }
        assertNotNull(Leaks.quiescenceProblem(SANDBOX.cluster(), app), "the leak check did not see a primary connection in use");
        probe.rollback();
      }
      for (int i = 0; i < 20; i++) exercise(i % 2 == 0 ? db.write() : db.read(), i, 2000);
      int n = db.readWithRetry(c -> {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM items")) {
          rs.next();
          return rs.getInt(1);
        }
      });
      assertTrue(n >= 100);
      Leaks.assertQuiescent(SANDBOX.cluster(), app);
    }
    Leaks.assertGone(SANDBOX.cluster(), app);
  }
}
