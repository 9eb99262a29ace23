package dev.omnium.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 34 item 3: one JVM connecting with many distinct property sets (a router each, as
 * pgjdbc's own test suite makes at least 126) never exhausts a server's {@code max_connections}.
 * The routers share one lag watcher per replica and one WAL sampler on the primary, and their
 * pools together stay within one cap per server and user ({@code replicaPoolSize} on the replica,
 * {@code fallbackPoolSize} on the primary); counted on the servers, whose logs show no refused
 * connection.
 */
class ManyConfigurationsIT {
  /** Below what 130 routers would need with a watcher, a sampler and warm sessions each. */
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .setting("max_connections", "40")
      .sql("CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL)",
          "INSERT INTO items SELECT g, g * 7 FROM generate_series(1, 100) g",
          "CREATE TABLE writes (id bigserial PRIMARY KEY, v int NOT NULL)")
      .build();

  static final int CONFIGURATIONS = 130;

  @AfterEach
  void shutdownRouters() {
    OmniumDriver.shutdown();
  }

  static String url(int i) {
    // a pgjdbc setting that changes only how the client reads results: one router per value
    return SANDBOX.url("many", "heartbeatInterval=200ms&defaultRowFetchSize=" + (i + 1));
  }

  @Test
  void manyPropertySetsShareTheBackgroundSessionsAndStayWithinTheCaps() throws Exception {
    try (Connection first = DriverManager.getConnection(url(0))) {
      Poll.until(Duration.ofSeconds(30), "a read-only transaction on the replica",
          () -> readOnly(first).inRecovery());
    }
    long start = System.nanoTime();
    int onReplica = 0;
    int mostOnReplica = 0;
    int mostOnPrimary = 0;
    for (int i = 0; i < CONFIGURATIONS; i++) {
      try (Connection c = DriverManager.getConnection(url(i))) {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO writes (v) VALUES (?)")) {
          ps.setInt(1, i);
          ps.executeUpdate();
        }
        if (readOnly(c).inRecovery()) onReplica++;
      }
      mostOnReplica = Math.max(mostOnReplica, own(SANDBOX.replica(), "many"));
      mostOnPrimary = Math.max(mostOnPrimary, own(SANDBOX.primary(), "many"));
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    int routers = routerBeans("many");
    // The watcher's occasional look for other servers behind the replica's address (a reader
    // endpoint) is a short extra session with the watcher's name: wait for it to be gone.
    String watchers = "SELECT count(*) FROM pg_stat_activity"
        + " WHERE application_name = 'many:watcher'";
    Poll.until(Duration.ofSeconds(5), "a look for other servers to end",
        () -> "1".equals(SANDBOX.queryOne(SANDBOX.replica(), watchers)));
    Map<String, String> background = Map.of(
        "watcher", SANDBOX.queryOne(SANDBOX.replica(), watchers),
        "sampler", SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM pg_stat_activity"
            + " WHERE application_name = 'many:sampler'"));
    System.out.printf("FIGURE many configurations (PostgreSQL %s): %d routers in %d ms; %d of %d"
            + " reads on the replica; most of omnium's own sessions seen: replica %d, primary %d;"
            + " background sessions %s%n", SANDBOX.cluster().version(), routers, millis,
        onReplica, CONFIGURATIONS, mostOnReplica, mostOnPrimary, background);
    assertTrue(routers >= CONFIGURATIONS, "one router per property set: " + routers);
    assertEquals("1", background.get("watcher"), "one lag watcher on the replica for all routers");
    assertEquals("1", background.get("sampler"), "one WAL sampler on the primary for all routers");
    // the watcher (and at times its short look for other servers), and replicaPoolSize (8)
    // pooled sessions for the whole process
    assertTrue(mostOnReplica <= 1 + 1 + 8, "omnium's own sessions on the replica: " + mostOnReplica);
    // the sampler, and fallbackPoolSize (4) pooled sessions for the whole process
    assertTrue(mostOnPrimary <= 1 + 4, "omnium's own sessions on the primary: " + mostOnPrimary);
    assertTrue(onReplica >= CONFIGURATIONS * 9 / 10, "reads on the replica: " + onReplica);
    assertFalse(SANDBOX.cluster().logs().contains("too many clients"),
        "a server refused a connection");
  }

  private static Where readOnly(Connection c) throws SQLException {
    try {
      return FootprintIT.readOnlyTransaction(c);
    } finally {
      c.setAutoCommit(true);
      c.setReadOnly(false);
    }
  }

  /** omnium's own sessions of {@code app} on a server (its routes other than the primary's). */
  private static int own(PgNode node, String app) throws SQLException {
    return Integer.parseInt(SANDBOX.queryOne(node, "SELECT count(*) FROM pg_stat_activity"
        + " WHERE application_name LIKE ?", app + ":%"));
  }

  private static int routerBeans(String app) throws Exception {
    int n = 0;
    for (ObjectName name : ManagementFactory.getPlatformMBeanServer()
        .queryNames(new ObjectName("dev.omnium:type=Router,*"), null)) {
      String value = name.getKeyProperty("name");
      if (value.equals(app) || value.startsWith(app + "-")) n++;
    }
    return n;
  }
}
