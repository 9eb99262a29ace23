package dev.omnium.jdbc;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.util.Map;
import java.util.Properties;

/**
 * The agent's entry into the driver. Compiled in the agent module but in the driver's package, and
 * relocated with it ({@code dev.omnium.agent.bundle.jdbc}), so it is defined by the same bundle
 * class loader as the driver it calls. The agent reaches it through method handles only: every
 * signature here uses {@code java.base} and {@code java.sql} types.
 */
public final class AgentSupport {
  private static final String PG_PREFIX = "jdbc:postgresql:";
  private static final String VALIDATION_URL = "jdbc:omnium:postgresql://localhost/validation";

  private AgentSupport() { }

  /**
   * Takes over one pgjdbc connect: {@code jdbc:postgresql:REST} becomes
   * {@code jdbc:omnium:postgresql:REST} with the agent's keys as URL parameters (so they win, and
   * are checked like URL keys: an unknown one is an error naming it). The application's own URL
   * parameters move into the properties, above {@code info} as pgjdbc ranks them, so a parameter
   * pgjdbc would ignore is ignored here too.
   *
   * @param agentQuery the agent's keys, already encoded as a URL query (without '?'); may be empty
   * @return the logical connection; or, when the login itself failed, pgjdbc's exception (a
   *     {@code PSQLException}: a wrong password, an unknown database, an untrusted certificate),
   *     which the application gets as it is, as from pgjdbc's own connect; null for a URL that is
   *     not pgjdbc's
   * @throws SQLException omnium could not take the connect over (a bad key): pgjdbc connects
   */
  public static Object connect(String pgUrl, Properties info, String agentQuery) throws SQLException {
    if (pgUrl == null || !pgUrl.startsWith(PG_PREFIX)) return null;
    int q = pgUrl.indexOf('?');
    String base = q < 0 ? pgUrl : pgUrl.substring(0, q);
    Properties props = new Properties();
    if (info != null) {
      for (String key : info.stringPropertyNames()) {
        props.setProperty(key, info.getProperty(key));
      }
    }
    if (q >= 0) {
      for (String token : pgUrl.substring(q + 1).split("&")) {
        if (token.isEmpty()) continue;
        int eq = token.indexOf('=');
        String key = decode(eq < 0 ? token : token.substring(0, eq));
        String value = eq < 0 ? "" : decode(token.substring(eq + 1));
        if (!key.isEmpty()) props.setProperty(key, value);
      }
    }
    String url = "jdbc:omnium:" + base.substring("jdbc:".length())
        + (agentQuery == null || agentQuery.isEmpty() ? "" : "?" + agentQuery);
    try {
      return Holder.DRIVER.connect(url, props);
    } catch (SQLException e) {
      // pgjdbc's own error for the same login: trying again there would repeat it. A bad key is
      // no PSQLException: pgjdbc connects then.
      if (isPgjdbcError(e)) return e;
      throw e;
    }
  }

  /**
   * By name: this class must load where pgjdbc is not visible (a Spring Boot fat jar at premain,
   * see validate), and a catch clause of pgjdbc's type would make its verification need pgjdbc.
   */
  private static boolean isPgjdbcError(SQLException e) {
    for (Class<?> c = e.getClass(); c != null; c = c.getSuperclass()) {
      if (c.getName().equals("org.postgresql.util.PSQLException")) return true;
    }
    return false;
  }

  /**
   * Checks the agent's keys without connecting: null when they are fine, else the driver's own
   * message. With pgjdbc visible from this loader the check is exactly the URL's; without it (a
   * Spring Boot fat jar at premain) only omnium keys and values are checked here, the rest at the
   * first connect.
   */
  public static String validate(String agentQuery, Map<String, String> keys) {
    try {
      if (pgjdbcVisible()) {
        OmniumConfig.of(VALIDATION_URL + (agentQuery.isEmpty() ? "" : "?" + agentQuery), null);
        return null;
      }
      Properties omnium = new Properties();
      for (Map.Entry<String, String> e : keys.entrySet()) {
        OmniumProperty p = OmniumProperty.forName(e.getKey());
        if (p != null) {
          omnium.setProperty(e.getKey(), e.getValue());
        } else {
          OmniumProperty near = OmniumProperty.forNameIgnoreCase(e.getKey());
          if (near != null) {
            return "Unknown key " + e.getKey() + ": did you mean " + near.getName() + "?";
          }
        }
      }
      for (OmniumProperty p : OmniumProperty.values()) {
        p.getValue(omnium);
      }
      return null;
    } catch (SQLException e) {
      // The keys came from the agent's argument, not from a URL: say so.
      String m = String.valueOf(e.getMessage());
      return m.startsWith("URL parameter ") || m.startsWith("Unknown URL parameter ")
          ? m.replaceFirst("URL parameter ", "key ") : m;
    }
  }

  /** Created at the first connect only: validation must not need pgjdbc. */
  private static final class Holder {
    static final OmniumDriver DRIVER = new OmniumDriver();
  }

  private static boolean pgjdbcVisible() {
    try {
      Class.forName("org.postgresql.PGProperty", false, AgentSupport.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static String decode(String raw) throws SQLException {
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      // Never echo the value: it may be a password. pgjdbc reports the URL itself.
      throw new SQLNonTransientConnectionException("Invalid percent-encoding in a URL parameter", "08001");
    }
  }
}
