package dev.omnium.jdbc;

import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.logging.Logger;

/**
 * The {@code jdbc:omnium:postgresql://PRIMARY[:PORT]/DATABASE?replica=HOST[:PORT]&maxAge=5s}
 * driver.
 *
 * <p>Registered with {@link DriverManager} through {@code META-INF/services/java.sql.Driver}. It
 * returns null for URLs it does not own. Every connection it opens is an {@link OmniumConnection}
 * with its own primary connection (the application's pool sizes the primary); connections with the
 * same configuration share one router: replica pools, the capped fallback pool and the lag
 * watchers.
 * URL parameters win over {@link Properties}; every pgjdbc property passes through to the physical
 * connections. The keys are {@code OmniumProperty}'s (the README's key table); the rules the
 * connections keep are docs/routing-contract.md.
 */
public final class OmniumDriver implements Driver {
  static {
    try {
      DriverManager.registerDriver(new OmniumDriver());
    } catch (SQLException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * Public for {@link java.util.ServiceLoader}; applications normally use {@link DriverManager}.
   */
  public OmniumDriver() {
  }

  /**
   * Opens a logical connection once its credentials are proven, as pgjdbc's connect does: a
   * credential set (user, password, authentication and TLS settings) the router has not proven
   * logs in now, and that login's session is the connection's primary session; one it proved
   * opens nothing before the connection's first use.
   * A replication connection ({@code replication=database} or {@code true}) is pgjdbc's own,
   * opened now on the primary and never routed.
   *
   * @param url a {@code jdbc:omnium:postgresql:} URL
   * @param info pgjdbc and omnium properties (the URL's parameters win), may be null
   * @return an {@link OmniumConnection} (pgjdbc's connection for replication), or null when the
   *     URL is not a {@code jdbc:omnium:} URL
   * @throws SQLException SQLState {@code 08001} when the URL is null or malformed, a key is
   *     unknown or a value is invalid (the message names the key and the accepted form); when the
   *     login fails, pgjdbc's own exception ({@code 28P01} wrong password, {@code 28000} no
   *     pg_hba.conf entry, {@code 3D000} unknown database, {@code 08006} TLS, {@code 08001}
   *     unreachable, …); 22023 for a negative {@code defaultRowFetchSize}, as pgjdbc
   */
  @Override
  public Connection connect(String url, Properties info) throws SQLException {
    if (url == null) throw new SQLException("omnium: the URL is null", "08001");
    if (!OmniumUrl.accepts(url)) return null;
    OmniumConfig config = OmniumConfig.of(url, info);
    if (config.replication()) {
      Properties p = config.pgjdbcProperties();
      p.putIfAbsent("ApplicationName", config.applicationName());
      p.setProperty(PgConnector.PHYSICAL_MARKER, "replication"); // not the agent's to take over
      return new org.postgresql.Driver().connect(config.primaryUrl(), p);
    }
    OmniumConnection c = RouterRegistry.connect(config);
    c.url(Secrets.maskUrl(url));
    return c;
  }

  /**
   * @param url any JDBC URL, may be null
   * @return true for {@code jdbc:omnium:postgresql:} URLs (well-formed or not)
   */
  @Override
  public boolean acceptsURL(String url) {
    return url != null && OmniumUrl.accepts(url);
  }

  /**
   * The omnium keys with their values for this URL, then pgjdbc's; while the URL is still
   * incomplete, the omnium keys with their defaults.
   *
   * @param url a {@code jdbc:omnium:postgresql:} URL
   * @param info properties, may be null
   * @return the keys; empty for a URL this driver does not accept
   * @throws SQLException when pgjdbc cannot list its properties for the primary's URL
   */
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
        DriverPropertyInfo d =
            new DriverPropertyInfo(p.getName(), p.isSecret() ? null : p.getDefaultValue());
        d.description = p.getDescription();
        d.choices = p.getChoices();
        keys.add(d);
      }
      return keys.toArray(new DriverPropertyInfo[0]);
    }
    List<DriverPropertyInfo> all = new ArrayList<>(Arrays.asList(config.propertyInfo()));
    for (DriverPropertyInfo d
        : new org.postgresql.Driver().getPropertyInfo(config.primaryUrl(), info)) {
      if (Secrets.isSecretKey(d.name)) {
        d.value = null; // pgjdbc echoes the password it was given
      }
      all.add(d);
    }
    return all.toArray(new DriverPropertyInfo[0]);
  }

  /** @return 0 */
  @Override public int getMajorVersion() { return 0; }

  /** @return 1 */
  @Override public int getMinorVersion() { return 1; }

  /**
   * pgjdbc does not claim full compliance either.
   *
   * @return false
   */
  @Override public boolean jdbcCompliant() { return false; }

  /** @return the {@code dev.omnium.jdbc} logger (the driver itself logs through SLF4J) */
  @Override public Logger getParentLogger() { return Logger.getLogger("dev.omnium.jdbc"); }

  /**
   * Registers a lag alert listener for every router of this driver, existing and future.
   *
   * @param listener called on the lag-watcher threads; return quickly
   * @throws NullPointerException when {@code listener} is null
   */
  public static void addLagAlertListener(LagAlertListener listener) {
    RouterRegistry.addListener(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Removes a listener added with {@link #addLagAlertListener(LagAlertListener)}.
   *
   * @param listener the listener; unknown or null: nothing happens
   */
  public static void removeLagAlertListener(LagAlertListener listener) {
    RouterRegistry.removeListener(listener);
  }

  /**
   * Gives HikariCP's metrics tracker factory (e.g. its {@code MicrometerMetricsTrackerFactory}) to
   * every internal pool of every router in this JVM, driver and {@link OmniumDataSource} alike:
   * the pools that are open now and every later one, so they report HikariCP's own meters
   * ({@code hikaricp.connections*}) under their pool names. HikariCP accepts one factory per pool:
   * a pool that already has one keeps it.
   *
   * @param factory the factory, or null to give none to pools created from now on
   */
  public static void setPoolMetricsTrackerFactory(MetricsTrackerFactory factory) {
    Pools.metricsTrackerFactory(factory);
  }

  /**
   * Closes every router this driver opened (replica and fallback pools, lag watchers, JMX beans).
   * For application shutdown and tests; connections opened afterwards start new routers.
   */
  public static void shutdown() {
    RouterRegistry.closeAll();
  }
}
