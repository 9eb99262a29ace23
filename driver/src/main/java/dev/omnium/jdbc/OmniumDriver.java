package dev.omnium.jdbc;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.logging.Logger;

/**
 * The {@code jdbc:omnium:postgresql://PRIMARY[:PORT]/DATABASE?replica=HOST[:PORT]&maxAge=5s} driver.
 *
 * <p>Registered with {@link DriverManager} through {@code META-INF/services/java.sql.Driver}. It
 * returns null for URLs it does not own. Every connection it opens is an {@link OmniumConnection}
 * with its own primary connection (the application's pool sizes the primary); connections with the
 * same configuration share one router: replica pools, the capped fallback pool and the lag watchers.
 * URL parameters win over {@link Properties}; every pgjdbc property passes through to the physical
 * connections.
 */
public final class OmniumDriver implements Driver {
  static {
    try {
      DriverManager.registerDriver(new OmniumDriver());
    } catch (SQLException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Public for {@link java.util.ServiceLoader}; applications normally use {@link DriverManager}. */
  public OmniumDriver() {
  }

  @Override
  public Connection connect(String url, Properties info) throws SQLException {
    if (url == null) throw new SQLException("omnium: the URL is null", "08001");
    if (!OmniumUrl.accepts(url)) return null;
    return RouterRegistry.connect(OmniumConfig.of(url, info));
  }

  @Override
  public boolean acceptsURL(String url) {
    return url != null && OmniumUrl.accepts(url);
  }

  @Override
  public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
    if (!acceptsURL(url)) return new DriverPropertyInfo[0];
    OmniumConfig config;
    try {
      config = OmniumConfig.of(url, info);
    } catch (SQLException incomplete) {
      // Tools ask while the user is still typing the URL: list the keys with their defaults.
      List<DriverPropertyInfo> keys = new ArrayList<>();
      for (OmniumProperty p : OmniumProperty.values()) {
        DriverPropertyInfo d = new DriverPropertyInfo(p.getName(), p.isSecret() ? null : p.getDefaultValue());
        d.description = p.getDescription();
        d.choices = p.getChoices();
        keys.add(d);
      }
      return keys.toArray(new DriverPropertyInfo[0]);
    }
    List<DriverPropertyInfo> all = new ArrayList<>(Arrays.asList(config.propertyInfo()));
    org.postgresql.Driver pgjdbc = new org.postgresql.Driver();
    for (DriverPropertyInfo d : pgjdbc.getPropertyInfo(config.primaryUrl(), info)) {
      if (Secrets.isSecretKey(d.name)) d.value = null; // pgjdbc echoes the password it was given
      all.add(d);
    }
    return all.toArray(new DriverPropertyInfo[0]);
  }

  @Override public int getMajorVersion() { return 0; }
  @Override public int getMinorVersion() { return 1; }

  /** pgjdbc does not claim full compliance either. */
  @Override public boolean jdbcCompliant() { return false; }

  @Override public Logger getParentLogger() { return Logger.getLogger("dev.omnium.jdbc"); }

  /** Registers a lag alert listener for every router of this driver, existing and future. */
  public static void addLagAlertListener(LagAlertListener listener) {
    RouterRegistry.addListener(java.util.Objects.requireNonNull(listener, "listener"));
  }

  /** Removes a listener added with {@link #addLagAlertListener(LagAlertListener)}. */
  public static void removeLagAlertListener(LagAlertListener listener) {
    RouterRegistry.removeListener(listener);
  }

  /**
   * Closes every router this driver opened (replica and fallback pools, lag watchers, JMX beans).
   * For application shutdown and tests; connections opened afterwards start new routers.
   */
  public static void shutdown() {
    RouterRegistry.closeAll();
  }
}
