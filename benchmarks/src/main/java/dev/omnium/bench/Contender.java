package dev.omnium.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import java.util.Properties;
import javax.sql.DataSource;

/**
 * What a user would pick to get a connection for a read-only transaction, each built with the
 * same pool size ({@link #POOL_SIZE} connections to the server that serves the reads), the same
 * user and the same cluster. Like Caffeine's cache types, the contenders are one JMH parameter so
 * that they run in the same run on the same machine, the physical limit among them.
 */
public enum Contender {
  /** (a) The limit: the application's HikariCP pool straight to the replica, plain pgjdbc. */
  REPLICA_POOL("(a) HikariCP → replica (the limit)"),
  /** (b) omnium in driver mode: {@code jdbc:omnium:} URL under the application's HikariCP pool. */
  OMNIUM_DRIVER("(b) omnium driver under HikariCP"),
  /** (c) {@link OmniumDataSource} used directly as the pool. */
  OMNIUM_DATASOURCE("(c) OmniumDataSource"),
  /** (d) pgjdbc multi-host URL with {@code targetServerType=preferSecondary} under HikariCP. */
  PGJDBC_MULTIHOST("(d) pgjdbc preferSecondary under HikariCP"),
  /** (e) AWS Advanced JDBC Wrapper 4.3.0, simple read/write splitting plugin ({@code srw}), under HikariCP. */
  AWS_WRAPPER_SRW("(e) AWS JDBC Wrapper srw under HikariCP"),
  /** HikariCP straight to the primary: the limit for writes and for reads that must run on the primary. */
  PRIMARY_POOL("HikariCP → primary (the limit)");

  /** Connections to the server that serves the measured work, for every contender. */
  public static final int POOL_SIZE = 16;
  /** omnium's cap on reads that run on the primary (its default). */
  public static final int FALLBACK_POOL_SIZE = 4;
  /** The staleness omnium accepts; small so that the stale-replica case needs no long wait. */
  public static final String MAX_AGE = "1s";
  public static final String HEARTBEAT_INTERVAL = "200ms";
  public static final String APP = "bench";

  private final String label;

  Contender(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  /** The omnium URL every omnium contender uses (driver mode and DataSource mode alike). */
  public static String omniumUrl(String primary, String replica, String database) {
    return "jdbc:omnium:postgresql://" + primary + "/" + database
        + "?replica=" + replica
        + "&maxAge=" + MAX_AGE
        + "&heartbeatInterval=" + HEARTBEAT_INTERVAL
        + "&applicationName=" + APP
        + "&replicaPoolSize=" + POOL_SIZE
        + "&primaryPoolSize=" + POOL_SIZE
        + "&fallbackPoolSize=" + FALLBACK_POOL_SIZE;
  }

  /** Builds this contender's data source; close it with {@link #close(DataSource)}. */
  public DataSource open(BenchCluster c) {
    return open(c, c.primary().hostPort(), c.replica().hostPort());
  }

  /**
   * Builds this contender's data source for the cluster reached at the given {@code host:port}
   * addresses (the servers themselves, or {@link WireCounter} proxies in front of them).
   */
  public DataSource open(BenchCluster c, String primary, String replica) {
    return open(c, primary, replica, "");
  }

  /**
   * Like {@link #open(BenchCluster, String, String)}, with {@code omniumOptions} (such as
   * {@code "&readYourWrites=thread"}) appended to omnium's URL; other contenders ignore them.
   */
  public DataSource open(BenchCluster c, String primary, String replica, String omniumOptions) {
    String db = c.database();
    switch (this) {
      case REPLICA_POOL:
        return hikari("jdbc:postgresql://" + replica + "/" + db, null, new Properties(), c);
      case PRIMARY_POOL:
        return hikari("jdbc:postgresql://" + primary + "/" + db, null, new Properties(), c);
      case OMNIUM_DRIVER:
        return hikari(omniumUrl(primary, replica, db) + omniumOptions, OmniumDriver.class.getName(),
            new Properties(), c);
      case OMNIUM_DATASOURCE: {
        OmniumDataSource ds = new OmniumDataSource(omniumUrl(primary, replica, db) + omniumOptions);
        ds.setUser(BenchCluster.DATA_SOURCE_USER);
        return ds;
      }
      case PGJDBC_MULTIHOST: {
        String url = "jdbc:postgresql://" + primary + "," + replica + "/" + db + "?targetServerType=preferSecondary";
        return hikari(url, org.postgresql.Driver.class.getName(), new Properties(), c);
      }
      case AWS_WRAPPER_SRW: {
        Properties p = new Properties();
        p.setProperty("wrapperPlugins", "srw");
        p.setProperty("srwWriteEndpoint", primary);
        p.setProperty("srwReadEndpoint", replica);
        p.setProperty("wrapperDialect", "pg");
        // Role verification only knows RDS/Aurora; the plugin's documentation says to turn it off elsewhere.
        p.setProperty("verifyNewSrwConnections", "false");
        String url = "jdbc:aws-wrapper:postgresql://" + primary + "/" + db;
        return hikari(url, "software.amazon.jdbc.Driver", p, c);
      }
      default:
        throw new AssertionError(this);
    }
  }

  private HikariDataSource hikari(String url, String driverClass, Properties props, BenchCluster c) {
    return pool("bench-" + name().toLowerCase(java.util.Locale.ROOT), url, driverClass, props, true, c);
  }

  /**
   * A HikariCP pool of {@link #POOL_SIZE} connections, kept full, as every contender's.
   *
   * @param driverClass null for pgjdbc found by its URL
   * @param autoCommit the auto-commit of the connections it lends
   */
  static HikariDataSource pool(String name, String url, String driverClass, Properties props,
      boolean autoCommit, BenchCluster c) {
    HikariConfig hc = new HikariConfig();
    hc.setPoolName(name);
    hc.setJdbcUrl(url);
    if (driverClass != null) hc.setDriverClassName(driverClass);
    hc.setUsername(c.user());
    hc.setMaximumPoolSize(POOL_SIZE);
    hc.setMinimumIdle(POOL_SIZE);
    hc.setConnectionTimeout(10_000);
    hc.setDataSourceProperties(props);
    hc.setAutoCommit(autoCommit);
    return new HikariDataSource(hc);
  }

  /** Closes what {@link #open} built, including driver-mode routers. */
  public static void close(DataSource ds) {
    if (ds instanceof AutoCloseable) {
      try {
        ((AutoCloseable) ds).close();
      } catch (Exception ignored) {
        // closing a benchmark's pool
      }
    }
    OmniumDriver.shutdown();
  }
}
