package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The session a proving login opened is lent first, but only while the server still serves it: a
 * pool's first session is where HikariCP learns the default isolation level once for good, and
 * a session that fails there with a class 08 error leaves that pool setting level -1 on every
 * later session, which pgjdbc refuses (HikariCP issues 887 and 2269).
 */
class PgConnectorSeedTest {
  @Test
  void aSeededSessionTheServerEndedIsClosedAndALoginTakesItsPlace() throws SQLException {
    // nothing listens on port 1: the login that replaces the seed fails at once
    PgConnector connector = new PgConnector("jdbc:postgresql://127.0.0.1:1/x", new Properties(),
        "test");
    StubSessions.Session ended = StubSessions.session();
    ended.ended = true; // terminated by the server while it waited to be lent
    connector.seed(ended.connection);
    assertThrows(SQLException.class, connector::connect);
    assertTrue(ended.closed(), "closed, never lent");

    StubSessions.Session live = StubSessions.session();
    connector.seed(live.connection);
    assertSame(live.connection, connector.connect());
  }
}
