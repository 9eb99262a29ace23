package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A logical connection gives a closed prepared statement's parameter log to its next statement:
 * what the servers receive must be exactly what the same program sends through plain pgjdbc. A
 * parameter left unset fails as with pgjdbc (nothing of the previous statement is sent in its
 * place), and a batch pending when its statement closes never reaches the server.
 */
class ParameterLogRecyclingIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).sql(
      "CREATE TABLE rows_omnium (id int PRIMARY KEY, v text)",
      "CREATE TABLE rows_pgjdbc (id int PRIMARY KEY, v text)").build();

  private static Connection omnium(String app) throws SQLException {
    return DriverManager.getConnection(SANDBOX.url(app, "heartbeatInterval=200ms&maxAge=30s"));
  }

  private static Connection pgjdbc() throws SQLException {
    return SANDBOX.cluster().connect(SANDBOX.primary());
  }

  /** The same reads on both connections: each value, port and recovery, or the error. */
  private static List<String> reads(Connection c) throws SQLException {
    List<String> seen = new ArrayList<>();
    String sql = "SELECT ?::int, ?::text, inet_server_port(), pg_is_in_recovery()";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, 7);
      ps.setString(2, "first");
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        seen.add(rs.getInt(1) + " " + rs.getString(2));
        seen.add(rs.getInt(3) + " " + rs.getBoolean(4));
      }
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, 8); // parameter 2 left unset: pgjdbc refuses before sending
      SQLException e = assertThrows(SQLException.class, ps::executeQuery);
      seen.add(e.getSQLState() + " " + e.getMessage());
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(2, "third");
      ps.setInt(1, 9);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        seen.add(rs.getInt(1) + " " + rs.getString(2));
      }
    }
    return seen;
  }

  @Test
  void aStatementPreparedAfterAnotherClosedSendsOnlyItsOwnParameters() throws Exception {
    List<String> expected;
    try (Connection c = pgjdbc()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      expected = reads(c);
      c.commit();
    }
    try (Connection c = omnium("recycle-reads")) {
      c.setReadOnly(true);
      Poll.until(Duration.ofSeconds(60), "reads reach the replica", () -> {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
          return rs.next() && rs.getBoolean(1);
        }
      });
      c.setAutoCommit(false);
      List<String> seen = reads(c);
      c.commit();
      assertEquals(SANDBOX.cluster().replica(0).port() + " true", seen.get(1), "on the replica");
      assertEquals(SANDBOX.primary().port() + " false", expected.get(1));
      seen.set(1, expected.get(1)); // where a read ran is the one thing allowed to differ
      assertEquals(expected, seen);
    }
  }

  /** Two batches, the second statement prepared after the first closed with a row pending. */
  private static void batches(Connection c, String table) throws SQLException {
    String sql = "INSERT INTO " + table + " VALUES (?, ?)";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, 1);
      ps.setString(2, "a");
      ps.addBatch();
      ps.setInt(1, 2); // parameter 2 stays "a"
      ps.addBatch();
      assertArrayEquals(new int[] {1, 1}, ps.executeBatch());
      ps.setInt(1, 3);
      ps.addBatch(); // pending when the statement closes: never sent
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, 10);
      ps.setString(2, "z");
      ps.addBatch();
      ps.clearParameters();
      ps.setString(2, "y");
      ps.setInt(1, 11);
      ps.addBatch();
      assertArrayEquals(new int[] {1, 1}, ps.executeBatch());
    }
    c.commit();
  }

  private static List<String> rows(String table) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = pgjdbc(); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT id || ':' || v FROM " + table + " ORDER BY id")) {
      while (rs.next()) rows.add(rs.getString(1));
    }
    return rows;
  }

  @Test
  void batchRowsReachThePrimaryAsWithPgjdbc() throws Exception {
    try (Connection c = pgjdbc()) {
      c.setAutoCommit(false);
      batches(c, "rows_pgjdbc");
    }
    try (Connection c = omnium("recycle-batches")) {
      c.setAutoCommit(false);
      batches(c, "rows_omnium");
    }
    List<String> expected = rows("rows_pgjdbc");
    assertEquals(List.of("1:a", "2:a", "10:z", "11:y"), expected);
    assertEquals(expected, rows("rows_omnium"), "what the primary holds");
  }
}
