package dev.omnium.it.contract;

import static dev.omnium.it.contract.PoolsOfOne.one;
import static dev.omnium.it.contract.PoolsOfOne.url;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.jdbc.PgConnection;

/**
 * Issue 30, item 4: no privilege or identity reaches the next borrower of a pooled session.
 * {@code SET ROLE} and {@code SET SESSION AUTHORIZATION} are not undone by {@code RESET ALL}
 * (both are GUC_NO_RESET_ALL): whichever way a borrower changed who it is (the statements, {@code
 * set_config('role', …)}, a function, pgjdbc's own statement reached through {@code unwrap}), in
 * autocommit or in a transaction, the next borrower of the same pool runs as the login role, on
 * every pooled route: a replica, the fallback pool, and the internal primary pool of {@code
 * OmniumDataSource}; in DataSource and driver mode. Asserted on the server: {@code current_user}
 * and {@code session_user} as the next borrower's own statement sees them.
 */
class SessionIdentityIT {
  private static final AtomicInteger APPS = new AtomicInteger();
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE ROLE it_limited NOLOGIN", "CREATE TABLE only_login (v int)",
          "INSERT INTO only_login VALUES (1)", "REVOKE ALL ON only_login FROM PUBLIC",
          "CREATE FUNCTION it_become_limited() RETURNS text LANGUAGE sql"
              + " AS $$ SELECT set_config('role', 'it_limited', false) $$")
      .build();
  static PgCluster cluster;

  /** How a borrower changes its identity, each in autocommit and in a transaction. */
  static final String[] CHANGES = {"SET ROLE it_limited", "SET SESSION AUTHORIZATION it_limited",
      "SELECT set_config('role', 'it_limited', false)", "SELECT it_become_limited()",
      "SET ROLE it_limited; SELECT 1"};

  @BeforeAll
  static void up() {
    cluster = SANDBOX.cluster();
  }

  static String app() {
    return "sid" + APPS.incrementAndGet();
  }

  /**
   * What the server says the borrower is: current_user, session_user, whether it may read a
   * table only the login role may read, and whether it runs on a standby.
   */
  static String identity(Connection c) {
    try {
      return one(c, "SELECT current_user || ' ' || session_user || ' '"
          + " || (SELECT count(*) FROM only_login) || ' ' || pg_is_in_recovery()");
    } catch (SQLException e) {
      return "failed " + e.getSQLState() + ": " + e.getMessage();
    }
  }

  /**
   * Runs {@code change} on {@code c} as the work's own statement, and asserts that the work runs
   * as the limited role from then on (a statement still open keeps an autocommit read binding).
   */
  static void change(Connection c, String change) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(change);
      try (ResultSet rs = st.executeQuery("SELECT current_user")) {
        assertTrue(rs.next());
        assertEquals("it_limited", rs.getString(1), change);
      }
    }
  }

  /** Every next borrower's identity, as "route change: seen" when it is not the login role. */
  final List<String> wrong = new ArrayList<>();
  int checked;

  void expectLogin(String what, String seen, boolean onReplica) {
    checked++;
    String login = cluster.user() + " " + cluster.user() + " 1 " + onReplica;
    if (!login.equals(seen)) wrong.add(what + ": " + seen);
  }

  void assertNoneWrong() {
    System.out.printf("omnium figures: next-borrower identity after SET ROLE / SESSION"
        + " AUTHORIZATION, PG %s: %d of %d next borrowers ran as the login role%n",
        cluster.version(), checked - wrong.size(), checked);
    assertEquals(List.of(), wrong, "next borrowers that did not run as the login role");
  }

  /** Read-only work changes who it is; the next read-only borrower of the pool must not see it. */
  void readRoute(OmniumDataSource ds, String route, boolean onReplica) throws SQLException {
    for (String change : CHANGES) {
      for (boolean tx : new boolean[] {false, true}) {
        try (OmniumConnection c = ds.read()) {
          c.setAutoCommit(!tx);
          change(c, change);
          if (tx) c.commit();
        }
        for (int i = 0; i < 2; i++) {
          try (OmniumConnection c = ds.read()) {
            expectLogin(route + " " + change + (tx ? " (in a transaction)" : ""), identity(c),
                onReplica);
          }
        }
      }
    }
  }

  @Test
  void noIdentityReachesTheNextBorrowerOfAReplicaSession() throws Exception {
    try (OmniumDataSource ds = new OmniumDataSource(url(cluster, app(), true))) {
      Poll.until(Duration.ofSeconds(60), "reads on the replica", () -> {
        try (OmniumConnection c = ds.read()) {
          return "t".equals(one(c, "SELECT pg_is_in_recovery()"));
        }
      });
      readRoute(ds, "replica", true);
    }
    assertNoneWrong();
  }

  @Test
  void noIdentityReachesTheNextBorrowerOfAFallbackSession() throws Exception {
    try (OmniumDataSource ds = new OmniumDataSource(url(cluster, app(), false))) {
      readRoute(ds, "fallback", false);
    }
    assertNoneWrong();
  }

  @Test
  void noIdentityReachesTheNextBorrowerOfThePooledPrimary() throws Exception {
    try (OmniumDataSource ds = new OmniumDataSource(url(cluster, app(), false))) {
      List<String> changes = new ArrayList<>(List.of(CHANGES));
      changes.add("unwrap"); // pgjdbc's own statement: the driver never sees the SQL
      for (String change : changes) {
        for (boolean tx : new boolean[] {false, true}) {
          try (OmniumConnection c = ds.write()) {
            c.setAutoCommit(!tx);
            if (change.equals("unwrap")) {
              try (Statement st = c.unwrap(PgConnection.class).createStatement()) {
                st.execute("SET ROLE it_limited");
              }
            } else {
              change(c, change);
            }
            if (tx) c.commit();
          }
          for (int i = 0; i < 2; i++) {
            try (OmniumConnection c = ds.write()) {
              expectLogin("primary pool " + change + (tx ? " (in a transaction)" : ""),
                  identity(c), false);
            }
          }
        }
      }
    }
    assertNoneWrong();
  }

  /** Driver mode: each logical connection is closed; its read sessions go back to the router. */
  @Test
  void noIdentityReachesTheNextDriverConnection() throws Exception {
    for (boolean replica : new boolean[] {true, false}) {
      String url = url(cluster, app(), replica);
      if (replica) {
        Poll.until(Duration.ofSeconds(60), "reads on the replica", () -> {
          try (Connection c = DriverManager.getConnection(url)) {
            c.setReadOnly(true);
            return "t".equals(one(c, "SELECT pg_is_in_recovery()"));
          }
        });
      }
      for (String change : CHANGES) {
        try (Connection c = DriverManager.getConnection(url)) {
          c.setReadOnly(true);
          change(c, change);
        }
        try (Connection c = DriverManager.getConnection(url)) {
          c.setReadOnly(true);
          expectLogin("driver " + (replica ? "replica " : "fallback ") + change, identity(c),
              replica);
          c.setReadOnly(false);
          expectLogin("driver primary after " + change, identity(c), false);
        }
      }
    }
    assertNoneWrong();
  }
}
