package dev.omnium.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.RouterMXBean;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/** The binder follows routers through JMX; a fixed-figure router bean stands in for a real one. */
class OmniumMetricsTest {
  /** A router bean with set figures (pure logic: the suites on the sandbox use real routers). */
  static final class FixedRouter implements RouterMXBean {
    long lagMillis = 250;
    boolean alert;
    String state = "OK";

    @Override public String[] getReplicas() { return new String[] {"r1:5432"}; }
    @Override public Map<String, Long> getEffectiveLagMillis() {
      Map<String, Long> m = new LinkedHashMap<>();
      m.put("r1:5432", lagMillis);
      return m;
    }
    @Override public Map<String, String> getReplicaStates() { return Map.of("r1:5432", state); }
    @Override public long getMaxAgeMillis() { return 5000; }
    @Override public long getPrimaryStatements() { return 7; }
    @Override public long getReplicaRoutes() { return 5; }
    @Override public long getFallbackRoutes() { return 3; }
    @Override public long getRetries() { return 1; }
    @Override public long getReplicaAcquireFailures() { return 0; }
    @Override public long getWritePositionChecks() { return 0; }
    @Override public long getSessionResets() { return 0; }
    @Override public long getSessionsClosedForState() { return 0; }
    @Override public int getFallbackActive() { return 2; }
    @Override public int getFallbackPoolSize() { return 4; }
    @Override public boolean isLagAlert() { return alert; }
    @Override public boolean isHeartbeatLeader() { return true; }
    @Override public Map<String, Long> getClockOffsetMillis() { return Map.of(); }
  }

  @Test
  void metersOfPresentAndLaterRoutersAndNoneAfterTheyClose() throws Exception {
    MBeanServer server = MBeanServerFactory.newMBeanServer();
    FixedRouter first = new FixedRouter();
    ObjectName a = new ObjectName("dev.omnium:type=Router,name=orders");
    server.registerMBean(first, a);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (OmniumMetrics metrics = new OmniumMetrics(server, false)) {
      metrics.bindTo(registry);
      assertEquals(7, registry.get("omnium.routes").tags("router", "orders", "route", "primary")
          .functionCounter().count());
      assertEquals(5, registry.get("omnium.routes").tag("route", "replica").functionCounter()
          .count());
      assertEquals(3, registry.get("omnium.routes").tag("route", "fallback").functionCounter()
          .count());
      assertEquals(1, registry.get("omnium.retries").functionCounter().count());
      assertEquals(0.25,
          registry.get("omnium.replica.lag").tag("replica", "r1:5432").gauge().value());
      assertEquals(2, registry.get("omnium.fallback.active").gauge().value());
      assertEquals(4, registry.get("omnium.fallback.max").gauge().value());
      assertEquals(0, registry.get("omnium.lag.alert").gauge().value());
      assertEquals(1, registry.get("omnium.heartbeat.writer").gauge().value());
      first.alert = true;
      first.lagMillis = -1;
      assertEquals(1, registry.get("omnium.lag.alert").gauge().value());
      assertEquals(Double.POSITIVE_INFINITY, registry.get("omnium.replica.lag").gauge().value(),
          "unknown lag is infinite: no reads go there");
      for (String reason : OmniumMetrics.UNTRUSTED) {
        assertEquals(0, registry.get("omnium.replica.untrusted").tags("replica", "r1:5432",
            "reason", reason).gauge().value(), reason + " while the replica is OK");
      }
      first.state = "DIVERGED_TIMELINE";
      assertEquals(1, registry.get("omnium.replica.untrusted").tag("reason", "DIVERGED_TIMELINE")
          .gauge().value(), "a standby left on an abandoned timeline is named");
      assertEquals(0, registry.get("omnium.replica.untrusted").tag("reason", "FOREIGN_CLUSTER")
          .gauge().value());

      ObjectName b = new ObjectName("dev.omnium:type=Router,name=\"odd name\"");
      server.registerMBean(new FixedRouter(), b);
      assertEquals(4,
          registry.get("omnium.fallback.max").tag("router", "odd name").gauge().value());

      server.unregisterMBean(a);
      assertNull(registry.find("omnium.routes").tag("router", "orders").functionCounter(),
          "a closed router takes its meters with it");
      assertTrue(
          registry.find("omnium.routes").tag("router", "odd name").functionCounter() != null);
    }
    assertTrue(registry.find("omnium.routes").meters().isEmpty(), "close() removes every meter");
  }

  /** A router behind whose one replica address servers are found and forgotten. */
  static final class EndpointRouter extends FixedRouterBase {
    volatile Map<String, Long> lag = Map.of("ep:5000", 100L);

    @Override public String[] getReplicas() { return lag.keySet().toArray(new String[0]); }
    @Override public Map<String, Long> getEffectiveLagMillis() { return lag; }
    @Override public Map<String, String> getReplicaStates() { return Map.of(); }
  }

  /** FixedRouter's figures, its replica methods overridable. */
  abstract static class FixedRouterBase implements RouterMXBean {
    private final FixedRouter f = new FixedRouter();

    @Override public long getMaxAgeMillis() { return f.getMaxAgeMillis(); }
    @Override public long getPrimaryStatements() { return f.getPrimaryStatements(); }
    @Override public long getReplicaRoutes() { return f.getReplicaRoutes(); }
    @Override public long getFallbackRoutes() { return f.getFallbackRoutes(); }
    @Override public long getRetries() { return f.getRetries(); }
    @Override public long getReplicaAcquireFailures() { return 0; }
    @Override public long getWritePositionChecks() { return 0; }
    @Override public long getSessionResets() { return 0; }
    @Override public long getSessionsClosedForState() { return 0; }
    @Override public int getFallbackActive() { return f.getFallbackActive(); }
    @Override public int getFallbackPoolSize() { return f.getFallbackPoolSize(); }
    @Override public boolean isLagAlert() { return false; }
    @Override public boolean isHeartbeatLeader() { return false; }
    @Override public Map<String, Long> getClockOffsetMillis() { return Map.of(); }
  }

  @Test
  void eachServerBehindAReaderEndpointHasItsLagGaugeWhileTheRouterKnowsIt() throws Exception {
    MBeanServer server = MBeanServerFactory.newMBeanServer();
    EndpointRouter router = new EndpointRouter();
    Map<String, Long> two = new LinkedHashMap<>();
    two.put("ep:5000", 100L);
    two.put("ep:5000/10.0.0.1:5432", 100L);
    two.put("ep:5000/10.0.0.2:5432", -1L);
    router.lag = two;
    server.registerMBean(router, new ObjectName("dev.omnium:type=Router,name=reads"));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (OmniumMetrics metrics = new OmniumMetrics(server, false)) {
      metrics.bindTo(registry);
      assertEquals(0.1, registry.get("omnium.replica.lag").tag("replica", "ep:5000").gauge()
          .value());
      assertEquals(0.1, registry.get("omnium.replica.lag").tags("router", "reads", "replica",
          "ep:5000/10.0.0.1:5432").gauge().value());
      assertEquals(Double.POSITIVE_INFINITY, registry.get("omnium.replica.lag")
          .tag("replica", "ep:5000/10.0.0.2:5432").gauge().value(), "the stale server");

      Map<String, Long> three = new LinkedHashMap<>(two);
      three.remove("ep:5000/10.0.0.2:5432");
      three.put("ep:5000/10.0.0.3:5432", 40L);
      router.lag = three;
      metrics.refreshServers();
      assertNull(registry.find("omnium.replica.lag").tag("replica", "ep:5000/10.0.0.2:5432")
          .gauge(), "a forgotten server's gauge goes");
      assertEquals(0.04, registry.get("omnium.replica.lag")
          .tag("replica", "ep:5000/10.0.0.3:5432").gauge().value(), "a found one's comes");
      assertEquals(3, registry.find("omnium.replica.lag").gauges().size());

      router.lag = Map.of("ep:5000", 100L); // one server behind it again
      metrics.refreshServers();
      assertEquals(List.of("ep:5000"), registry.find("omnium.replica.lag").gauges().stream()
          .map(g -> g.getId().getTag("replica")).toList());
    }
    assertTrue(registry.find("omnium.replica.lag").meters().isEmpty(), "close() removes them");
  }
}
