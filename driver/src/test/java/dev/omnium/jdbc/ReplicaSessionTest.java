package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;

/** Validation of pooled replica sessions: the lag watcher's answer stands in for a round trip. */
class ReplicaSessionTest {
  private final AtomicInteger serverChecks = new AtomicInteger();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicBoolean serverSaysValid = new AtomicBoolean(true);
  private final AtomicBoolean watcherAnswers = new AtomicBoolean(true);

  private final Connection physical = (Connection) Proxy.newProxyInstance(
      getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, m, args) -> {
        switch (m.getName()) {
          case "isValid":
            serverChecks.incrementAndGet();
            return serverSaysValid.get();
          case "isClosed":
            return closed.get();
          case "getSchema":
            return "public";
          default:
            throw new UnsupportedOperationException(m.getName());
        }
      });

  private final ReplicaSession session = new ReplicaSession(physical, watcherAnswers::get);

  @Test
  void whileTheWatcherHearsFromTheServerValidationCostsNoRoundTrip() throws SQLException {
    assertTrue(session.isValid(2));
    assertTrue(session.isValid(2));
    assertEquals(0, serverChecks.get());
  }

  @Test
  void aClosedSocketIsNeverValid() throws SQLException {
    closed.set(true);
    serverSaysValid.set(false);
    assertFalse(session.isValid(2));
    assertEquals(1, serverChecks.get(), "asked the session itself");
  }

  @Test
  void withoutAnAnswerFromTheWatcherTheServerIsAsked() throws SQLException {
    watcherAnswers.set(false);
    serverSaysValid.set(false);
    assertFalse(session.isValid(2));
    assertEquals(1, serverChecks.get());
  }

  @Test
  void everythingElseDelegatesAndUnwrappingIsHonest() throws SQLException {
    assertEquals("public", session.getSchema());
    assertSame(session, session.unwrap(ReplicaSession.class));
    // pgjdbc's own answer, as on a logical connection
    PSQLException e = assertThrows(PSQLException.class, () -> session.isValid(-1));
    assertEquals("22023", e.getSQLState());
  }
}
