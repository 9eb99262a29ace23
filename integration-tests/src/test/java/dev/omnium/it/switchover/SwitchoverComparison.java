package dev.omnium.it.switchover;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The peer comparison of docs/reliability.md: the same switchover and crash failover as
 * {@link SwitchoverIT}, one contender at a time, each on its own fresh two-node cluster:
 * omnium (driver mode under HikariCP, DataSource mode), pgjdbc multi-host (a write pool with
 * {@code targetServerType=primary}, a read pool with {@code preferSecondary}, both
 * {@code hostRecheckSeconds=2}) and the AWS Advanced JDBC Wrapper's read-write splitting plugin
 * ({@code srw}, fixed endpoints) under HikariCP. Prints a Markdown table and writes it to
 * {@code target/switchover-peers.md}; fails when omnium lost a read or sent a write to a standby.
 *
 * <p>Not an {@code *IT}: CI does not run it. Run it (a few minutes) with
 * {@code integration-tests/switchover-peers.sh [15]}.
 */
class SwitchoverComparison {
  static final int POOL = 6;
  static final int READERS = 6;

  enum Contender { OMNIUM_DRIVER, OMNIUM_DATASOURCE, PGJDBC_MULTIHOST, AWS_SRW }

  @Test
  void compare() throws Exception {
    String wanted = System.getProperty("switchover.peers.version", "18");
    String running = System.getProperty("omnium.pg.version", "18");
    Assumptions.assumeTrue(wanted.equals(running), "peer comparison runs on PostgreSQL " + wanted
        + " only (switchover.peers.version), this execution is " + running);
    List<String> rows = new ArrayList<>();
    String version = null;
    for (Contender c : Contender.values()) {
      try (PgCluster cluster = PgCluster.builder().replicas(1).start()) {
        version = cluster.version();
        PgNode a = cluster.primary();
        PgNode b = cluster.replica(0);
        try (Connection conn = cluster.connect(a); Statement st = conn.createStatement()) {
          st.execute("CREATE TABLE sw_writes (id bigserial PRIMARY KEY, app text NOT NULL,"
              + " at timestamptz NOT NULL DEFAULT now())");
          st.execute("CREATE TABLE sw_probe (id int PRIMARY KEY)");
          st.execute("INSERT INTO sw_probe VALUES (1)");
        }
        cluster.awaitCaughtUp(b);
        // The heartbeat for every contender: omnium writes it itself (heartbeatWriter=true); for
        // the peers a separate omnium router writes it, so "fresh" means the same for all.
        try (OmniumDataSource beat = c.name().startsWith("OMNIUM") ? null
            : new OmniumDataSource(url(cluster, a, b, "beat") + "&replicaPoolSize=1")) {
          if (beat != null) beat.metrics();
          rows.add(row(c, "planned", run(c, cluster, a, b, false)));
          rows.add(row(c, "crash", run(c, cluster, b, a, true)));
        }
      } finally {
        OmniumDriver.shutdown();
      }
    }
    StringBuilder table = new StringBuilder();
    table.append("PostgreSQL ").append(version).append(", application pool ").append(POOL)
        .append(", 1 writer every 10 ms, ").append(READERS)
        .append(" read-only transactions every 5 ms\n\n")
        .append("| contender | scenario | write outage (ms) | failed writes | failed reads")
        .append(" | 25006 on writes | reads back on a standby after fresh (ms)")
        .append(" | reads on the primary, last second |\n")
        .append("|---|---|---|---|---|---|---|---|\n");
    rows.forEach(r -> table.append(r).append('\n'));
    System.out.println(table);
    Files.writeString(Path.of("target/switchover-peers.md"), table);
    for (String[] failure : omniumFailures) {
      throw new AssertionError(failure[0] + ": " + failure[1]);
    }
  }

  private final List<String[]> omniumFailures = new ArrayList<>();

  static String url(PgCluster cluster, PgNode a, PgNode b, String app) {
    String nodes = a.hostPort() + "," + b.hostPort();
    return "jdbc:omnium:postgresql://" + nodes + "/" + cluster.database() + "?replica=" + nodes
        + "&heartbeatWriter=true&applicationName=" + app + "&user=" + cluster.user()
        + (cluster.password() == null ? "" : "&password=" + cluster.password())
        + "&heartbeatInterval=250ms&maxAge=2s&connectTimeout=2";
  }

  private Map<String, Object> run(Contender c, PgCluster cluster, PgNode from, PgNode to,
                                         boolean crash) throws Exception {
    // Endpoints as each contender is configured from the start: the cluster's first two nodes.
    PgNode a = cluster.primary();
    PgNode b = cluster.replica(0);
    String app = c.name().toLowerCase(Locale.ROOT).replace('_', '-') + (crash ? "-c" : "-p");
    List<AutoCloseable> open = new ArrayList<>();
    Workload w;
    switch (c) {
      case OMNIUM_DRIVER: {
        HikariDataSource pool = hikari(cluster, app, url(cluster, a, b, app),
            OmniumDriver.class.getName(), new Properties());
        open.add(pool);
        w = new Workload(app, pool::getConnection, pool::getConnection, READERS);
        break;
      }
      case OMNIUM_DATASOURCE: {
        OmniumDataSource ds =
            new OmniumDataSource(url(cluster, a, b, app) + "&primaryPoolSize=" + POOL);
        open.add(ds);
        w = new Workload(app, ds::getConnection, ds::getConnection, READERS);
        break;
      }
      case PGJDBC_MULTIHOST: {
        String base = "jdbc:postgresql://" + a.hostPort() + "," + b.hostPort() + "/"
            + cluster.database() + "?hostRecheckSeconds=2&connectTimeout=2&ApplicationName=" + app;
        HikariDataSource writes = hikari(cluster, app + "-w", base + "&targetServerType=primary",
            "org.postgresql.Driver", new Properties());
        HikariDataSource reads = hikari(cluster, app + "-r",
            base + "&targetServerType=preferSecondary",
            "org.postgresql.Driver", new Properties());
        open.add(writes);
        open.add(reads);
        w = new Workload(app, writes::getConnection, reads::getConnection, READERS);
        break;
      }
      case AWS_SRW: {
        Properties p = new Properties();
        p.setProperty("wrapperPlugins", "srw");
        p.setProperty("srwWriteEndpoint", a.hostPort());
        p.setProperty("srwReadEndpoint", b.hostPort());
        p.setProperty("wrapperDialect", "pg");
        // Role verification only knows RDS/Aurora; the plugin's documentation says to turn it off.
        p.setProperty("verifyNewSrwConnections", "false");
        p.setProperty("ApplicationName", app);
        HikariDataSource pool = hikari(cluster, app,
            "jdbc:aws-wrapper:postgresql://" + a.hostPort() + "/"
            + cluster.database(), "software.amazon.jdbc.Driver", p);
        open.add(pool);
        w = new Workload(app, pool::getConnection, pool::getConnection, READERS);
        break;
      }
      default:
        throw new AssertionError(c);
    }
    Switchover s = new Switchover(cluster, from, to, crash, 2);
    s.strict = false;
    w.start();
    try {
      s.run(List.of(w), List.of(app));
    } finally {
      w.stop(15_000);
      for (AutoCloseable x : open) x.close();
      OmniumDriver.shutdown();
    }
    Map<String, Object> f = s.figures(w);
    f.put("notes", s.notes);
    f.put("failureSamples", Switchover.samples(w.ops()));
    System.out.println("FIGURES switchover-peers " + c + " " + (crash ? "crash" : "planned")
        + ": " + f);
    if (c.name().startsWith("OMNIUM") && ((Long) f.get("readsFailed") != 0
        || (Long) f.get("writes25006") != 0 || (Long) f.get("writesOnStandby") != 0)) {
      omniumFailures.add(new String[] {c + " " + (crash ? "crash" : "planned"), f.toString()});
    }
    return f;
  }

  private static HikariDataSource hikari(PgCluster cluster, String name, String url, String driver,
                                         Properties p) {
    HikariConfig hc = new HikariConfig();
    hc.setUsername(cluster.user());
    if (cluster.password() != null) hc.setPassword(cluster.password());
    hc.setPoolName(name);
    hc.setJdbcUrl(url);
    hc.setDriverClassName(driver);
    hc.setMaximumPoolSize(POOL);
    hc.setMinimumIdle(POOL);
    hc.setDataSourceProperties(p);
    return new HikariDataSource(hc);
  }

  private static String row(Contender c, String scenario, Map<String, Object> f) {
    long back = (Long) f.get("readsBackOnStandbyMs");
    return "| " + c + " | " + scenario + " | " + f.get("writeOutageMs") + " | "
        + f.get("writesFailed") + " | " + f.get("readsFailed") + " | " + f.get("writes25006")
        + " | " + (back < 0 ? "never" : back) + " | " + f.get("readsOnPrimaryLastSecondPct")
        + " % |";
  }
}
