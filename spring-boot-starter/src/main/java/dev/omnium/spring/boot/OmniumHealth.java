package dev.omnium.spring.boot;

import dev.omnium.jdbc.RouterMXBean;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * The {@code omnium} health component, independent of the Boot version: UP while the primary
 * answers; replicas, fallback pool, lag alert and heartbeat writer are details. A stale or dead
 * replica never makes it DOWN: reads still work, on the capped fallback pool.
 */
final class OmniumHealth {
  /** Outcome of one check. */
  record Result(boolean up, Map<String, Object> details) { }

  private final OmniumDataSources sources;
  private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
  private final int timeoutSeconds;

  OmniumHealth(OmniumDataSources sources, Duration timeout) {
    this.sources = sources;
    this.timeoutSeconds = (int) Math.max(1, timeout.toSeconds());
  }

  Result check() {
    List<OmniumDataSources.Entry> entries = sources.entries();
    if (entries.isEmpty()) {
      // e.g. spring.datasource.type names another pool: nothing this component can check
      return new Result(true, Map.of("dataSources", "no HikariCP DataSource over jdbc:omnium:"));
    }
    if (entries.size() == 1) {
      return check(entries.get(0));
    }
    boolean up = true;
    Map<String, Object> details = new LinkedHashMap<>();
    for (OmniumDataSources.Entry e : entries) {
      Result r = check(e);
      up &= r.up();
      details.put(e.beanName(), r.details());
    }
    return new Result(up, details);
  }

  private Result check(OmniumDataSources.Entry e) {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("router", e.applicationName());
    boolean up;
    // A read-write statement: it runs on the primary, as Boot's own db indicator does.
    try (Connection c = e.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.setQueryTimeout(timeoutSeconds);
      st.execute("SELECT 1");
      details.put("primary", "reachable");
      up = true;
    } catch (SQLException ex) {
      details.put("primary", "unreachable");
      details.put("error", ex.getClass().getSimpleName() + " (SQLState " + ex.getSQLState() + "): "
          + ex.getMessage());
      up = false;
    }
    routerDetails(e.applicationName(), details);
    return new Result(up, details);
  }

  private void routerDetails(String app, Map<String, Object> details) {
    ObjectName name;
    try {
      name = routerName(app);
    } catch (MalformedObjectNameException ex) {
      details.put("routerState", "no JMX name for " + app);
      return;
    }
    if (!server.isRegistered(name)) {
      details.put("routerState", "not started (no connection yet)");
      return;
    }
    try {
      RouterMXBean router = JMX.newMXBeanProxy(server, name, RouterMXBean.class);
      long maxAge = router.getMaxAgeMillis();
      Map<String, Long> lag = router.getEffectiveLagMillis();
      Map<String, String> states = router.getReplicaStates();
      Map<String, Object> replicas = new LinkedHashMap<>();
      for (String replica : router.getReplicas()) {
        Map<String, Object> r = new LinkedHashMap<>();
        Long ms = lag.get(replica);
        boolean known = ms != null && ms >= 0;
        r.put("lagMillis", known ? ms : null);
        r.put("state", states.get(replica));
        r.put("fresh", known && ms <= maxAge);
        replicas.put(replica, r);
      }
      details.put("maxAgeMillis", maxAge);
      details.put("replicas", replicas);
      Map<String, Object> fallback = new LinkedHashMap<>();
      fallback.put("active", router.getFallbackActive());
      fallback.put("max", router.getFallbackPoolSize());
      details.put("fallback", fallback);
      details.put("lagAlert", router.isLagAlert());
      details.put("heartbeatWriter", router.isHeartbeatLeader());
    } catch (RuntimeException closed) {
      details.put("routerState", "closed while being read");
    }
  }

  /** The router's JMX name, quoted as the driver quotes unusual application names. */
  static ObjectName routerName(String app) throws MalformedObjectNameException {
    String value = app.matches("[A-Za-z0-9._-]+") ? app : ObjectName.quote(app);
    return new ObjectName("dev.omnium:type=Router,name=" + value);
  }
}
