package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.core.TransactionState;

/**
 * A primary session kept by a logical connection, idle and with its warnings cleared, is left
 * alone by read-only units of work (every call skipped is a no-op for pgjdbc there), and takes the
 * logical auto-commit before anything uses it. The conformance suite's "quiet-primary" scenarios
 * show the same against pgjdbc on real servers.
 */
class QuietPrimaryTest {
  @RegisterExtension static final StubRouter ROUTER = new StubRouter("unit-quiet");

  /** A logical connection that wrote on {@code p}, then was returned to an application pool. */
  private static OmniumConnection keptPrimary(StubSessions.Session p) throws SQLException {
    OmniumConnection c = ROUTER.on(p.connection);
    try (Statement st = c.createStatement()) {
      st.execute("INSERT INTO t VALUES (1)");
    }
    c.clearWarnings(); // HikariCP's at each return
    return c;
  }

  /** Spring's read-only transaction, then HikariCP's return, without a statement. */
  private static void readOnlyUnit(OmniumConnection c) throws SQLException {
    c.setReadOnly(true);
    c.setAutoCommit(false);
    c.commit();
    c.setAutoCommit(true);
    c.setReadOnly(false);
    c.clearWarnings();
  }

  private static List<String> callsSince(StubSessions.Session p, int from) {
    return p.calls.subList(from, p.calls.size());
  }

  @Test
  void readOnlyUnitsOfWorkMakeNoCallOnAQuietPrimarySession() throws SQLException {
    StubSessions.Session p = StubSessions.pgSession();
    OmniumConnection c = keptPrimary(p);
    int before = p.calls.size();
    for (int i = 0; i < 3; i++) readOnlyUnit(c);
    c.setAutoCommit(false);
    c.rollback();
    c.setAutoCommit(true);
    assertEquals(List.of(), callsSince(p, before));
    assertTrue(p.autoCommit);
  }

  @Test
  void theDeferredAutoCommitReachesTheSessionBeforeItsNextStatement() throws SQLException {
    StubSessions.Session p = StubSessions.pgSession();
    OmniumConnection c = keptPrimary(p);
    c.setAutoCommit(false);
    assertTrue(p.autoCommit, "nothing ran yet");
    int before = p.calls.size();
    try (Statement st = c.createStatement()) {
      st.execute("INSERT INTO t VALUES (2)");
    }
    List<String> calls = callsSince(p, before);
    assertFalse(p.autoCommit);
    assertTrue(calls.indexOf("setAutoCommit") >= 0
        && calls.indexOf("setAutoCommit") < calls.indexOf("createStatement"), calls.toString());
    before = p.calls.size();
    c.commit();
    assertEquals(List.of("commit"), callsSince(p, before).stream()
        .filter(n -> n.equals("commit") || n.equals("setAutoCommit")).toList());
  }

  @Test
  void whatUsesTheSessionWakesItFirst() throws SQLException {
    StubSessions.Session p = StubSessions.pgSession();
    OmniumConnection c = keptPrimary(p);
    c.setAutoCommit(false);
    c.isValid(1); // pgjdbc's check begins a transaction when auto-commit is off
    assertFalse(p.autoCommit, "isValid");
    c.rollback();
    c.setAutoCommit(true);
    c.clearWarnings();

    c.setAutoCommit(false);
    c.setSchema("s"); // pgjdbc's setSchema runs a statement, in the transaction auto-commit opens
    assertFalse(p.autoCommit, "setSchema");
    c.rollback();
    c.setAutoCommit(true);
    c.clearWarnings();

    c.setAutoCommit(false);
    c.setSavepoint();
    assertFalse(p.autoCommit, "setSavepoint");
  }

  @Test
  void aSessionInATransactionOrWithAnOpenStatementIsNotQuiet() throws SQLException {
    StubSessions.Session p = StubSessions.pgSession();
    OmniumConnection c = ROUTER.on(p.connection);
    try (Statement st = c.createStatement()) {
      st.execute("BEGIN"); // raw transaction control in auto-commit mode, as pgjdbc allows
    }
    p.transactionState = TransactionState.OPEN;
    c.clearWarnings();
    int before = p.calls.size();
    c.setAutoCommit(false);
    c.setAutoCommit(true); // pgjdbc commits the open transaction here
    assertEquals(List.of("setAutoCommit", "setAutoCommit"), callsSince(p, before).stream()
        .filter(n -> n.equals("setAutoCommit")).toList());

    p.transactionState = TransactionState.IDLE;
    Statement open = c.createStatement();
    open.execute("SELECT 1");
    c.clearWarnings();
    before = p.calls.size();
    c.setAutoCommit(false);
    assertTrue(callsSince(p, before).contains("setAutoCommit"), "an open statement");
    open.close();
    c.setAutoCommit(true);
    c.clearWarnings();
    before = p.calls.size();
    readOnlyUnit(c);
    assertEquals(List.of(), callsSince(p, before), "quiet once the statement closed");
  }

  @Test
  void aSessionWhosePgjdbcObjectsWereHandedOutIsNeverQuiet() throws SQLException {
    for (boolean copy : new boolean[] {true, false}) {
      StubSessions.Session p = StubSessions.pgSession();
      OmniumConnection c = keptPrimary(p);
      if (copy) {
        c.getCopyAPI(); // pgjdbc's CopyManager runs COPY on the session whenever it is called
      } else {
        c.getLargeObjectAPI(); // likewise its LargeObjectManager
      }
      c.clearWarnings();
      int before = p.calls.size();
      c.setAutoCommit(false);
      assertEquals(List.of("setAutoCommit"), callsSince(p, before),
          copy ? "copy" : "large objects");
    }
  }
}
