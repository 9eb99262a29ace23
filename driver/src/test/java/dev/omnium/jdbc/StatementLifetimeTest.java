package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.StubSessions.Session;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.sql.CallableStatement;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.util.PSQLException;

/**
 * How long a logical connection's statements live, as pgjdbc's: they check only their own state,
 * survive a lost primary session and a later close() (a pool's eviction, on its own thread), and
 * fail 08003 at execute; their setters refuse at the call what pgjdbc's refuse. A stub primary
 * session stands in for the server.
 */
class StatementLifetimeTest {
  @RegisterExtension
  static final StubRouter ROUTER = new StubRouter("unit-statement-lifetime");

  static OmniumConnection on(Session primary) {
    return ROUTER.on(primary.connection, primary.closes::incrementAndGet);
  }

  @Test
  void statementsOutliveALostSessionAndTheEvictionThatClosesTheConnection() throws Exception {
    Session primary = StubSessions.session();
    OmniumConnection c = on(primary);
    Statement st = c.createStatement();
    st.executeUpdate("INSERT INTO t VALUES (1)"); // binds the primary session
    PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?)");
    ps.setInt(1, 1);
    // the server ended the session (pg_terminate_backend): what the failing call reports
    c.checkPrimary(new SQLException("terminating connection due to administrator command",
        "57P01"));
    assertTrue(c.isClosed());
    c.close(); // e.g. HikariCP's eviction, on its own thread
    assertFalse(ps.isClosed(), "pgjdbc keeps them open");
    assertFalse(st.isClosed());
    ps.setInt(1, 2);
    ps.setFetchSize(5);
    assertEquals(5, ps.getFetchSize());
    SQLException e = assertThrows(SQLException.class, ps::executeUpdate);
    assertEquals("08003", e.getSQLState());
    assertTrue(e instanceof PSQLException, e.getClass().getName());
  }

  @Test
  void aStatementClosedOnAnotherThreadLeavesTheConnectionsListToItsOwnThread() throws Exception {
    OmniumConnection c = on(StubSessions.session());
    PreparedStatement leaked = c.prepareStatement("SELECT 1");
    Thread cleaner = new Thread(() -> {
      try {
        leaked.close(); // pgjdbc's own cleaners do this, as do pool watchdogs
      } catch (SQLException e) {
        throw new AssertionError(e);
      }
    });
    cleaner.start();
    cleaner.join();
    assertTrue(leaked.isClosed());
    assertTrue(c.state.statements.contains(leaked), "another thread never changes the list");
    List<PreparedStatement> open = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      open.add(c.prepareStatement("SELECT " + i));
    }
    assertTrue(c.state.statements.contains(leaked));
    open.add(c.prepareStatement("SELECT 15")); // the list reached 16: closed ones leave it
    assertFalse(c.state.statements.contains(leaked));
    assertEquals(16, c.state.statements.size());
    for (PreparedStatement ps : open) ps.close();
    // many statements closed by other threads while this one keeps preparing (pgjdbc's
    // StatementTest.sideStatementFinalizers): no failure on either side, nothing accumulates
    ExecutorService cleaners = Executors.newFixedThreadPool(4);
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      PreparedStatement ps = c.prepareStatement("SELECT " + i);
      done.add(cleaners.submit(() -> {
        ps.close();
        return null;
      }));
    }
    for (Future<?> f : done) f.get();
    cleaners.shutdown();
    // the closed ones leave the list when it next doubles: only what is open stays
    int kept = 0;
    while (Integer.bitCount(c.state.statements.size()) != 1) {
      c.prepareStatement("SELECT 1");
      kept++;
    }
    c.prepareStatement("SELECT 1");
    assertEquals(kept + 1, c.state.statements.size());
    c.close();
  }

  @Test
  void anOrdinaryCloseClosesThemAndMisuseFailsAsPgjdbc() throws Exception {
    OmniumConnection c = on(StubSessions.session());
    Statement st = c.createStatement();
    SQLException negative = assertThrows(SQLException.class, () -> st.setFetchSize(-1));
    assertEquals("22023", negative.getSQLState());
    assertTrue(negative instanceof PSQLException);
    SQLException abort = assertThrows(SQLException.class, () -> c.abort(null));
    assertNull(abort.getSQLState(), "pgjdbc's abort(null) has no SQLState");
    c.close();
    assertTrue(st.isClosed(), "closing a logical connection closes its statements");
    assertEquals(0, st.getFetchSize(), "pgjdbc reads its settings on a closed statement");
    SQLException closed = assertThrows(SQLException.class, st::getMaxRows);
    assertEquals("55000", closed.getSQLState());
    assertTrue(closed instanceof PSQLException);
  }

  @Test
  void aStreamedBlobInAutocommitFailsAtTheSetterAsPgjdbc() throws Exception {
    OmniumConnection c = on(StubSessions.session());
    PreparedStatement ps = c.prepareStatement("INSERT INTO lob VALUES (?)");
    SQLException e = assertThrows(SQLException.class,
        () -> ps.setBlob(1, new ByteArrayInputStream(new byte[] {1}), 1));
    assertEquals("25P01", e.getSQLState());
    ps.setBlob(1, (InputStream) null); // pgjdbc: setNull, fine in autocommit
    // in a transaction the large object is created at the setter, on the session of the unit of
    // work, as pgjdbc does (conformance: parameters/blob-reexecute-one-object)
    c.close();
  }

  /**
   * What a prepared statement's setters refuse at the call, as pgjdbc's do, before any session
   * is bound: an index outside pgjdbc's parameter count (counted by its own parser) and a Types
   * value setNull has no type for.
   */
  @Nested
  class SetterChecks {
    @Test
    void countsPlaceholdersAsPgjdbcsParser() {
      assertEquals(2, ParameterCounts.of("SELECT ?, ?"));
      assertEquals(1, ParameterCounts.of("SELECT '?', \"?\", ? -- ?\n /* ? */"));
      assertEquals(3, ParameterCounts.of("SELECT ?; SELECT ?, ?"));
      assertEquals(1, ParameterCounts.of("SELECT {fn ucase(?)}"));
      assertEquals(0, ParameterCounts.of("SELECT $$?$$, '{\"a\": 1}'::jsonb ?? 'a'"));
      assertEquals(0, ParameterCounts.of("SELECT 1"));
      // a backslash escapes a quote only with standard_conforming_strings off
      String escaped = "SELECT 'it\\'s', ?";
      assertEquals(1, ParameterCounts.of(escaped, false));
      assertTrue(ParameterCounts.of(escaped, null) >= 1, "unknown: no valid index refused");
    }

    @Test
    void anIndexAboveTheCountFailsAtTheSetterAndNothingIsBound() throws SQLException {
      Session primary = StubSessions.session();
      OmniumConnection c = on(primary);
      PreparedStatement ps = c.prepareStatement("SELECT ?::int, ?::text");
      ps.setInt(2, 1);
      PSQLException high = assertThrows(PSQLException.class, () -> ps.setInt(3, 1));
      assertEquals("22023", high.getSQLState());
      assertTrue(high.getMessage().contains("number of columns: 2"), high.getMessage());
      assertEquals("22023", assertThrows(PSQLException.class,
          () -> ps.setString(0, "a")).getSQLState());
      assertNull(c.primaryConnection(), "no session bound for a refused setter");
      c.close();
    }

    @Test
    void setNullRefusesATypesValuePgjdbcHasNoTypeFor() throws SQLException {
      Session primary = StubSessions.session();
      OmniumConnection c = on(primary);
      PreparedStatement ps = c.prepareStatement("SELECT ?");
      for (int known : new int[] {Types.INTEGER, Types.VARCHAR, Types.OTHER, Types.NULL,
          Types.TIMESTAMP_WITH_TIMEZONE, Types.REF_CURSOR, Types.SQLXML}) {
        ps.setNull(1, known);
      }
      for (int unknown : new int[] {12345, Types.NVARCHAR, Types.NCHAR, Types.JAVA_OBJECT}) {
        assertEquals("07006", assertThrows(PSQLException.class,
            () -> ps.setNull(1, unknown)).getSQLState(), "Types " + unknown);
      }
      // the index is checked first, as on pgjdbc
      assertEquals("22023", assertThrows(PSQLException.class,
          () -> ps.setNull(2, 12345)).getSQLState());
      c.close();
    }

    @Test
    void aCallableStatementLeavesItsCountToPgjdbcAtExecute() throws SQLException {
      OmniumConnection c = on(StubSessions.session());
      CallableStatement cs = c.prepareCall("{? = call f(?)}");
      cs.setInt(3, 1); // recorded; pgjdbc's statement refuses it at execute
      c.close();
    }
  }
}
