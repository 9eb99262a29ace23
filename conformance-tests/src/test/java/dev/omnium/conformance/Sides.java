package dev.omnium.conformance;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.PgCluster;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;

/** The sides of a comparison: how each mode hands out application connections. */
final class Sides {
  /** Omnium's own settings in every mode: small pools, quick lag measurement. */
  static final String OMNIUM_KEYS = "heartbeatInterval=200ms&maxAge=5s&replicaPoolSize=2"
      + "&fallbackPoolSize=2&replicaAcquireTimeout=1s&poolTimeout=10s";

  private Sides() { }

  /** A source backed by a {@link javax.sql.DataSource}-like opener. */
  record Named(String app, Opener opener) implements Source {
    @Override
    public Connection open() throws SQLException {
      return opener.open();
    }
  }

  /** Opens one application connection. */
  @FunctionalInterface
  interface Opener {
    Connection open() throws SQLException;
  }

  /** An application HikariCP pool as a typical service configures it. */
  static HikariDataSource hikari(String name, String url, String user) {
    HikariConfig hc = new HikariConfig();
    hc.setPoolName(name);
    hc.setJdbcUrl(url);
    hc.setUsername(user);
    hc.setMaximumPoolSize(6);
    hc.setMinimumIdle(0);
    hc.setConnectionTimeout(20_000);
    return new HikariDataSource(hc);
  }

  /** pgjdbc under an application HikariCP pool: the oracle. */
  static HikariDataSource pgjdbc(PgCluster cluster, String app) {
    return hikari(app, "jdbc:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?ApplicationName=" + app, cluster.user());
  }

  /** Plain pgjdbc through DriverManager, no pool: the oracle of OmniumDataSource and the agent. */
  static Source plain(PgCluster cluster, String app) {
    String url = "jdbc:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?ApplicationName=" + app;
    Properties p = new Properties();
    p.setProperty("user", cluster.user());
    return new Named(app, () -> DriverManager.getConnection(url, p));
  }

  /** Omnium's driver mode under the same application HikariCP pool. */
  static HikariDataSource omniumDriver(PgCluster cluster, String app) {
    return hikari(app, "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/"
        + cluster.database() + "?replica=" + cluster.replica(0).hostPort() + "&applicationName="
        + app + "&" + OMNIUM_KEYS, cluster.user());
  }

  /** OmniumDataSource as the application's pool. */
  static OmniumDataSource omniumDataSource(PgCluster cluster, String app) {
    OmniumDataSource ds = new OmniumDataSource("jdbc:omnium:postgresql://"
        + cluster.primary().hostPort() + "/" + cluster.database() + "?replica="
        + cluster.replica(0).hostPort() + "&applicationName=" + app + "&" + OMNIUM_KEYS);
    ds.setUser(cluster.user());
    return ds;
  }

  /** {@link ForkMain#awaitReplicaReads} for a source of this JVM. */
  static boolean awaitReplicaReads(Opener opener, Duration timeout) throws Exception {
    return ForkMain.awaitReplicaReads(new Named("warm-up", opener), timeout);
  }
}
