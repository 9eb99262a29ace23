package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.PgBouncer;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.Driver;

/**
 * The proof that a pooler pins a server session to each client and resets it when the client
 * leaves ({@link SessionPinning}), against PgBouncer in each configuration that matters, the
 * server seen directly, on PostgreSQL 18 and 15: it holds only for session pooling with a reset.
 */
class SessionPinningIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();

  private static final Driver PG = new Driver();

  private static SessionPinning.Opener opener(String jdbcUrl) {
    Properties p = new Properties();
    p.setProperty("user", SANDBOX.cluster().user());
    if (SANDBOX.cluster().password() != null) {
      p.setProperty("password", SANDBOX.cluster().password());
    }
    p.setProperty("prepareThreshold", "0");
    p.setProperty("loginTimeout", "5");
    return () -> PG.connect(jdbcUrl, p);
  }

  private static String disproof(String jdbcUrl) {
    return SessionPinning.disproof(opener(jdbcUrl), 5_000);
  }

  private static PgBouncer bouncer(PgBouncer.Mode mode, Map<String, String> settings) {
    return SANDBOX.cluster().startPgBouncer(SANDBOX.primary(), mode, settings);
  }

  @Test
  void sessionPoolingWithItsDefaultResetPinsSessions() throws Exception {
    PgBouncer b = bouncer(PgBouncer.Mode.SESSION, Map.of());
    assertNull(disproof(b.jdbcUrl()));
    try (Connection c = opener(b.jdbcUrl()).open()) {
      assertNull(SessionPinning.disproofWith(c, opener(b.jdbcUrl()), 5_000), "a later session");
    }
    PgBouncer replicaSide = SANDBOX.cluster().startPgBouncer(SANDBOX.replica(),
        PgBouncer.Mode.SESSION, Map.of());
    assertNull(disproof(replicaSide.jdbcUrl()), "in front of a standby");
  }

  @Test
  void sessionPoolingWithoutAResetDoesNot() {
    String why = disproof(bouncer(PgBouncer.Mode.SESSION, Map.of("server_reset_query", ""))
        .jdbcUrl());
    // a server session goes to the next client as the last one left it
    assertTrue(why != null && why.startsWith("no reset"), why);
  }

  @Test
  void transactionPoolingDoesNot() throws Exception {
    PgBouncer b = bouncer(PgBouncer.Mode.TRANSACTION, Map.of());
    String why = disproof(b.jdbcUrl());
    assertTrue(why != null && why.contains("(transaction pooling)"), why);
    try (Connection c = opener(b.jdbcUrl()).open()) {
      why = SessionPinning.disproofWith(c, opener(b.jdbcUrl()), 5_000);
      assertTrue(why != null && why.contains("(transaction pooling)"), "a later session: " + why);
    }
    // a reset after each transaction as well
    why = disproof(bouncer(PgBouncer.Mode.TRANSACTION, Map.of("server_reset_query_always", "1"))
        .jdbcUrl());
    assertTrue(why != null && why.contains("(transaction pooling)"), why);
  }

  /**
   * Each later login checks its own session again: after the proof held through a session-pooling
   * bouncer, a login that reaches transaction pooling (the bouncer restarted with it) sets
   * nothing on its session, and the connector turns to settings with each transaction.
   */
  @Test
  void aLaterLoginThatFindsTransactionPoolingSetsNothingAndEndsThePinning() throws Exception {
    SessionPinning.Opener session = opener(bouncer(PgBouncer.Mode.SESSION, Map.of()).jdbcUrl());
    SessionPinning.Opener transaction =
        opener(bouncer(PgBouncer.Mode.TRANSACTION, Map.of()).jdbcUrl());
    StartupSettings s = new StartupSettings(Map.of("statement_timeout", "2000"), null, false,
        true);
    assertTrue(s.refused(new SQLException("FATAL: unsupported startup parameter: options",
        "08P01"), "test", true, session));
    assertNotNull(s.pinned(), "proven through session pooling");
    assertNull(s.perTransaction());
    try (Connection c = session.open()) {
      s.settle(c, "test", false, session);
      assertEquals("2s", show(c), "a later session through session pooling sets them");
      assertNotNull(s.pinned());
    }
    try (Connection c = session.open()) {
      // a check that cannot be made (no server session free for its second client): the login
      // fails, nothing is set, and the pinning stands for the next login
      SQLException e = assertThrows(SQLException.class, () -> s.settle(c, "test", false, () -> {
        throw new SQLException("no server session free", "08P01");
      }));
      assertTrue(e.getMessage().contains("could not check"), e.getMessage());
      assertEquals("0", show(c), "nothing set on a session that was not checked");
      assertNotNull(s.pinned());
    }
    try (Connection c = transaction.open()) {
      s.settle(c, "test", false, transaction);
      assertEquals("0", show(c), "nothing set on a server session others share");
      assertNull(s.pinned());
      assertNotNull(s.perTransaction(), "settings with each transaction from now on");
    }
  }

  private static String show(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SHOW statement_timeout")) {
      rs.next();
      return rs.getString(1);
    }
  }

  @Test
  void aServerSeenDirectlyDoesNot() throws Exception {
    // a client that leaves ends its server session: nothing to prove pinning with
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary())) {
      String why = disproof(c.getMetaData().getURL());
      assertTrue(why != null && why.contains("was closed"), why);
    }
  }
}
