package dev.omnium.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Opens pgjdbc connections for one route. Calls pgjdbc's driver directly instead of going through
 * {@code DriverManager}, so our own physical connects never re-enter this driver (or an agent's
 * interception of it) and never pick a different driver registered for the same URL.
 * Doubles as the {@link DataSource} the internal HikariCP pools draw from.
 */
final class PgConnector implements DataSource {
  private static final org.postgresql.Driver PG = new org.postgresql.Driver();

  /**
   * Agent hook (the only line of the driver the javaagent depends on): every physical connect
   * carries this property. The omnium javaagent (module agent/) intercepts
   * {@code org.postgresql.Driver.connect} to take over the application's {@code jdbc:postgresql:}
   * connections; it leaves a connect carrying this key to pgjdbc, so the driver's own physical
   * connections never recurse into it. pgjdbc ignores properties it does not know.
   */
  static final String PHYSICAL_MARKER = "omnium.physical";

  private final String url;
  /** Replaced whole (never mutated) when the credentials rotate: a connect reads it once. */
  private volatile Properties props;
  private final String description;
  private volatile int loginTimeoutSeconds;
  /** Set when the router closes: nothing waits for a connect in flight, nothing new is kept. */
  private volatile boolean closing;

  PgConnector(String url, Properties props, String description) {
    this.url = url;
    Properties marked = new Properties();
    for (String key : props.stringPropertyNames()) marked.setProperty(key, props.getProperty(key));
    marked.setProperty(PHYSICAL_MARKER, "true"); // see PHYSICAL_MARKER: the agent's recursion guard
    this.props = marked;
    this.description = description;
  }

  /**
   * Credential rotation: physical connections opened from now on use {@code secrets} (the secret
   * keys, such as password, of the latest configuration) instead of the current ones. Connections
   * already open keep their sessions.
   *
   * @param secrets every secret key of the route with its value; keys missing here are dropped
   */
  void useSecrets(Map<String, String> secrets) {
    Properties fresh = new Properties();
    for (String key : props.stringPropertyNames()) {
      if (!Secrets.isSecretKey(key)) fresh.setProperty(key, props.getProperty(key));
    }
    secrets.forEach(fresh::setProperty);
    props = fresh;
  }

  Connection connect() throws SQLException {
    Properties p = props;
    int login = loginTimeoutSeconds;
    if (login > 0 && p.getProperty("loginTimeout") == null) {
      p = new Properties();
      p.putAll(props);
      p.setProperty("loginTimeout", Integer.toString(login));
    }
    Connection c = PG.connect(url, p);
    if (c == null) {
      throw new SQLException("omnium: pgjdbc refused the URL for " + description, "08001");
    }
    if (closing) {
      // A pool's connect that was in flight when it shut down: its pool would drop it unclosed.
      c.close();
      throw new SQLException("omnium: " + description + " is closed", "08003");
    }
    return c;
  }

  /**
   * The router closes: HikariCP's shutdown waits {@link #getLoginTimeout()} for connects in flight
   * (seconds when a server is down or frozen); from now on it waits for none, and a connect that
   * completes later closes its session at once.
   */
  void closing() {
    closing = true;
  }

  @Override public Connection getConnection() throws SQLException { return connect(); }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("omnium: credentials come from the omnium URL");
  }

  @Override public PrintWriter getLogWriter() { return null; }
  @Override public void setLogWriter(PrintWriter out) { }
  @Override public void setLoginTimeout(int seconds) { loginTimeoutSeconds = seconds; }
  @Override public int getLoginTimeout() { return closing ? 0 : loginTimeoutSeconds; }
  @Override public Logger getParentLogger() { return Logger.getLogger("dev.omnium.jdbc"); }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) return iface.cast(this);
    throw new SQLException("omnium: not a wrapper for " + iface.getName());
  }

  @Override public boolean isWrapperFor(Class<?> iface) { return iface.isInstance(this); }

  /** Never shows the properties: they hold the password. */
  @Override public String toString() { return "PgConnector[" + description + "]"; }
}
