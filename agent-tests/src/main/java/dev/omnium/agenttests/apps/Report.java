package dev.omnium.agenttests.apps;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * What every test application prints for each unit of work, as the server that ran it reports it:
 * {@code WHERE <unit> <pg_is_in_recovery> <inet_server_port> <application_name>}. The applications
 * know nothing about omnium: they only use JDBC, HikariCP or Spring.
 */
public final class Report {
  public static final String SQL =
      "SELECT pg_is_in_recovery(), inet_server_port(), current_setting('application_name')";
  public static final String INSERT = "INSERT INTO agent_writes (app) VALUES (?)";

  private Report() { }

  /** Runs {@link #SQL} on {@code c} and prints the line. */
  public static void where(String unit, Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(SQL)) {
      rs.next();
      line(unit, rs.getBoolean(1), rs.getInt(2), rs.getString(3));
    }
  }

  public static void line(String unit, boolean inRecovery, int port, String applicationName) {
    String name = applicationName == null || applicationName.isEmpty() ? "-" : applicationName;
    synchronized (System.out) {
      System.out.println("WHERE " + unit + " " + inRecovery + " " + port + " " + name);
      System.out.flush();
    }
  }

  public static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
