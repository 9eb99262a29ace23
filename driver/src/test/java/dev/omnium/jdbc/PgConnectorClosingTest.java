package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A connector whose router closes, against a loopback "server" that accepts and never answers:
 * no connect starts after {@link PgConnector#closing()} (the server sees none), and HikariCP's
 * shutdown is told to wait for its session adder only while no connect is under way (one may
 * hang on a frozen server).
 */
class PgConnectorClosingTest {
  private ServerSocket server;
  private PgConnector connector;

  @BeforeEach
  void start() throws Exception {
    server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
    Properties p = new Properties();
    p.setProperty("user", "nobody");
    p.setProperty("connectTimeout", "5");
    p.setProperty("loginTimeout", "10");
    connector = new PgConnector("jdbc:postgresql://127.0.0.1:" + server.getLocalPort() + "/db", p,
        "test route");
    connector.setLoginTimeout(7);
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
  }

  @Test
  void aConnectAfterClosingFailsWithoutReachingTheServer() throws Exception {
    assertEquals(7, connector.getLoginTimeout(), "open: the login timeout HikariCP set");
    connector.closing();
    SQLException e = assertThrows(SQLException.class, connector::connect);
    assertEquals("08003", e.getSQLState());
    server.setSoTimeout(300);
    assertThrows(SocketTimeoutException.class, server::accept, "the server saw a connection");
    assertEquals(1, connector.getLoginTimeout(),
        "nothing under way: HikariCP waits for its idle adder thread to end (at most 1 s)");
  }

  @Test
  void aConnectUnderWayMakesTheShutdownWaitForNothing() throws Exception {
    CompletableFuture<Throwable> attempt = CompletableFuture.supplyAsync(() -> {
      try {
        connector.connect().close();
        return null;
      } catch (SQLException e) {
        return e;
      }
    });
    server.setSoTimeout(10_000);
    try (Socket hanging = server.accept()) { // the connect reached the server, which never answers
      connector.closing();
      assertEquals(0, connector.getLoginTimeout(), "a connect hangs: no wait for it");
      hanging.close(); // the server goes away: the connect fails
      Throwable failed = attempt.get(10, TimeUnit.SECONDS);
      assertTrue(failed instanceof SQLException, "the connect failed: " + failed);
    }
    assertEquals(1, connector.getLoginTimeout(), "none under way any more");
  }
}
