package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.fail;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import dev.omnium.sandbox.testkit.Poll;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Suite 8, run at the end of every suite: what the driver's pools report and what the servers see.
 *
 * <ul>
 *   <li>{@link #assertQuiescent}: with every logical connection closed, each internal pool of the
 *       application reports zero active connections and no waiting thread, and {@code pg_stat_activity}
 *       shows no session of it beyond the pools' idle ones (per route, never more than the pool
 *       holds, all idle), one lag watcher per replica, one primary WAL sampler and at most one heartbeat writer.</li>
 *   <li>{@link #assertGone}: after every data source is closed and {@code OmniumDriver.shutdown()},
 *       no session of the application on any server, no pool or router MBean, no thread.</li>
 * </ul>
 */
final class Leaks {
  private static final Duration SETTLE = Duration.ofSeconds(10);

  private Leaks() { }

  /** One internal HikariCP pool as its MBean reports it. */
  record Pool(String name, int active, int idle, int total, int waiting) { }

  static Map<String, Pool> pools(String app) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    Map<String, Pool> pools = new TreeMap<>();
    for (ObjectName n : server.queryNames(new ObjectName("com.zaxxer.hikari:*"), null)) {
      String s = n.toString();
      if (!s.contains("type=Pool") || s.contains("PoolConfig")) continue;
      String poolName = poolName(n);
      if (poolName == null || !poolName.startsWith(app + "-")) continue;
      try {
        pools.put(poolName, new Pool(poolName,
            (Integer) server.getAttribute(n, "ActiveConnections"),
            (Integer) server.getAttribute(n, "IdleConnections"),
            (Integer) server.getAttribute(n, "TotalConnections"),
            (Integer) server.getAttribute(n, "ThreadsAwaitingConnection")));
      } catch (javax.management.InstanceNotFoundException gone) {
        // closed meanwhile
      }
    }
    return pools;
  }

  /** HikariCP names its pool MBean "type=Pool (name)" or "type=Pool,name=name". */
  private static String poolName(ObjectName n) {
    String name = n.getKeyProperty("name");
    if (name != null) return ObjectName.unquote(name.startsWith("\"") ? name : "\"" + name + "\"");
    String type = n.getKeyProperty("type");
    if (type != null && type.startsWith("Pool (") && type.endsWith(")")) return type.substring(6, type.length() - 1);
    return null;
  }

  /** Sessions of {@code app} on one server: "route state" to count; route is "" for the primary route. */
  static Map<String, Integer> sessions(PgCluster cluster, PgNode node, String app) throws SQLException {
    Properties p = new Properties();
    p.setProperty("connectTimeout", "3");
    p.setProperty("socketTimeout", "10");
    p.setProperty("ApplicationName", "leak-check");
    Map<String, Integer> out = new LinkedHashMap<>();
    try (Connection c = cluster.connect(node, p);
         PreparedStatement ps = c.prepareStatement("SELECT application_name, coalesce(state, ''), count(*)"
             + " FROM pg_stat_activity WHERE (application_name = ? OR starts_with(application_name, ?))"
             + " AND pid <> pg_backend_pid() GROUP BY 1, 2 ORDER BY 1, 2")) {
      ps.setString(1, app);
      ps.setString(2, app + ":");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String name = rs.getString(1);
          String route = name.equals(app) ? "" : name.substring(app.length() + 1);
          out.put(route + " " + rs.getString(2), rs.getInt(3));
        }
      }
    }
    return out;
  }

  /** Nodes that answer now (a test may leave a replica stopped); the others cannot hold sessions. */
  private static List<PgNode> reachable(PgCluster cluster) {
    List<PgNode> nodes = new ArrayList<>();
    nodes.add(cluster.primary());
    nodes.addAll(cluster.replicas());
    List<PgNode> up = new ArrayList<>();
    for (PgNode n : nodes) {
      Properties p = new Properties();
      p.setProperty("connectTimeout", "3");
      p.setProperty("socketTimeout", "5");
      p.setProperty("loginTimeout", "5");
      try (Connection c = cluster.connect(n, p)) {
        up.add(n);
      } catch (SQLException e) {
        // down or frozen: no session of ours can be on it
      }
    }
    return up;
  }

  /**
   * With every logical connection of {@code app} closed: pools idle, sessions within the pools.
   * Polls up to 10 s (returned connections and ended sessions settle asynchronously), then fails
   * with the last problem seen.
   */
  static void assertQuiescent(PgCluster cluster, String app) throws Exception {
    String[] last = {null};
    try {
      Poll.until(SETTLE, "the pools and sessions of " + app + " to settle", () -> {
        last[0] = quiescenceProblem(cluster, app);
        return last[0] == null;
      });
    } catch (AssertionError e) {
      fail("leak: " + last[0]);
    }
  }

  /** What keeps {@code app} from being quiescent right now, or null. */
  static String quiescenceProblem(PgCluster cluster, String app) throws Exception {
    Map<String, Pool> pools = pools(app);
    for (Pool p : pools.values()) {
      if (p.active() != 0 || p.waiting() != 0) {
        return "pool " + p.name() + " reports " + p.active() + " active connections and " + p.waiting()
            + " waiting threads with every logical connection closed: " + pools.values();
      }
    }
    for (PgNode node : reachable(cluster)) {
      Map<String, Integer> seen = sessions(cluster, node, app);
      Map<String, Integer> perRoute = new TreeMap<>();
      for (Map.Entry<String, Integer> e : seen.entrySet()) {
        String route = e.getKey().substring(0, e.getKey().indexOf(' '));
        String state = e.getKey().substring(e.getKey().indexOf(' ') + 1);
        boolean watcher = route.equals("watcher") || route.equals("sampler")
            || route.equals("heartbeat");
        if (!state.equals("idle") && !(watcher && state.equals("active"))) {
          return node.name() + " shows " + e.getValue() + " session(s) of " + app + (route.isEmpty() ? "" : ":" + route)
              + " in state '" + state + "' with every logical connection closed: " + seen;
        }
        perRoute.merge(route, e.getValue(), Integer::sum);
      }
      String port = "_" + node.port() + "-";
      for (Map.Entry<String, Integer> e : perRoute.entrySet()) {
        String route = e.getKey();
        int allowed;
        switch (route) {
          case "":
            allowed = total(pools, app + "-primary-", null);
            break;
          case "fallback":
            allowed = total(pools, app + "-fallback-", null);
            break;
          case "replica":
            allowed = total(pools, app + "-replica-", port);
            break;
          case "watcher":
            // one watcher per replica at most (routers that watch it alike share it)
            allowed = count(pools, app + "-replica-", port);
            break;
          case "sampler":
            allowed = node == cluster.primary() ? routers(app) : 0; // one primary WAL sampler per router at most
            break;
          case "heartbeat":
            allowed = node == cluster.primary() ? routers(app) : 0; // one writer connection per router at most
            break;
          default:
            allowed = 0;
        }
        if (e.getValue() > allowed) {
          return node.name() + " holds " + e.getValue() + " session(s) of " + app + (route.isEmpty() ? "" : ":" + route)
              + " but the pools/watchers account for " + allowed + ": sessions " + seen + ", pools " + pools.values();
        }
      }
    }
    return null;
  }

  private static int total(Map<String, Pool> pools, String prefix, String portPart) {
    int n = 0;
    for (Pool p : pools.values()) {
      if (p.name().startsWith(prefix) && (portPart == null || p.name().contains(portPart))) n += p.total();
    }
    return n;
  }

  private static int count(Map<String, Pool> pools, String prefix, String portPart) {
    int n = 0;
    for (Pool p : pools.values()) {
      if (p.name().startsWith(prefix) && p.name().contains(portPart)) n++;
    }
    return n;
  }

  /** Routers of {@code app} registered in JMX (a second router of the same name is registered as app-2). */
  static int routers(String app) throws Exception {
    int n = 0;
    for (ObjectName o : ManagementFactory.getPlatformMBeanServer().queryNames(new ObjectName("dev.omnium:type=Router,*"), null)) {
      String name = o.getKeyProperty("name");
      if (name != null && (name.equals(app) || name.matches(java.util.regex.Pattern.quote(app) + "-[0-9]+"))) n++;
    }
    return n;
  }

  static List<String> threadsOf(String app) {
    List<String> names = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String n = t.getName();
      if (t.isAlive() && (n.startsWith(app + "-") || n.startsWith(app + ":") || n.startsWith("omnium-lag-" + app + "-")
          || n.equals("omnium-heartbeat-" + app))) {
        names.add(n);
      }
    }
    return names;
  }

  static List<String> mbeansOf(String app) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    List<String> names = new ArrayList<>();
    for (ObjectName n : server.queryNames(new ObjectName("dev.omnium:*"), null)) {
      String name = n.getKeyProperty("name");
      if (name != null && (name.equals(app) || name.startsWith(app + "-"))) names.add(n.toString());
    }
    for (ObjectName n : server.queryNames(new ObjectName("com.zaxxer.hikari:*"), null)) {
      String pool = poolName(n);
      if (pool == null) {
        String s = n.toString();
        if (s.contains("(" + app + "-")) names.add(s);
      } else if (pool.startsWith(app + "-")) {
        names.add(n.toString());
      }
    }
    return names;
  }

  /**
   * After every data source of {@code app} is closed and {@code OmniumDriver.shutdown()} ran: no
   * session of it on any server that answers, no MBean, no thread. Polls up to 10 s.
   */
  static void assertGone(PgCluster cluster, String app) throws Exception {
    String[] last = {null};
    try {
      Poll.until(SETTLE, "everything of " + app + " to be gone", () -> {
        List<String> threads = threadsOf(app);
        if (!threads.isEmpty()) {
          last[0] = "threads of " + app + " still alive after close: " + threads;
          return false;
        }
        List<String> beans = mbeansOf(app);
        if (!beans.isEmpty()) {
          last[0] = "MBeans of " + app + " still registered after close: " + beans;
          return false;
        }
        for (PgNode node : reachable(cluster)) {
          Map<String, Integer> s = sessions(cluster, node, app);
          if (!s.isEmpty()) {
            last[0] = node.name() + " still shows sessions of " + app + " after close: " + s;
            return false;
          }
        }
        return true;
      });
    } catch (AssertionError e) {
      fail("leak: " + last[0]);
    }
  }
}
