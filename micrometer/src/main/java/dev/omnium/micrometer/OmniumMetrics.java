package dev.omnium.micrometer;

import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.jdbc.RouterMXBean;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.MBeanServerDelegate;
import javax.management.MBeanServerNotification;
import javax.management.MalformedObjectNameException;
import javax.management.Notification;
import javax.management.NotificationFilter;
import javax.management.NotificationListener;
import javax.management.ObjectName;

/**
 * Micrometer meters for every omnium router of this JVM, present and future, found through their
 * JMX beans ({@code dev.omnium:type=Router,name=<applicationName>}), plus HikariCP's own
 * {@code hikaricp.connections*} meters for the routers' internal pools.
 *
 * <table>
 *   <caption>Meters (every one also tagged {@code router} = the router's JMX name)</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>meaning</th></tr>
 *   <tr><td>omnium.routes</td><td>counter</td><td>route=primary|replica|fallback</td>
 *     <td>primary: statements of read-write work; replica, fallback: read-only units of
 *     work</td></tr>
 *   <tr><td>omnium.replica.lag</td><td>gauge, seconds</td><td>replica=host:port, and
 *     replica=host:port/server for each server found behind an address that reaches several (a
 *     reader endpoint)</td>
 *     <td>effective lag; +Inf while unknown (no reads go there). The per-server gauges appear
 *     as the router finds servers and go when it forgets them, within
 *     {@link #SERVERS_REFRESH_SECONDS} s</td></tr>
 *   <tr><td>omnium.replica.untrusted</td><td>gauge</td><td>replica=host:port,
 *     reason=FOREIGN_CLUSTER|DIVERGED_TIMELINE|IDENTITY_UNKNOWN</td>
 *     <td>1 while the listed server is not a replica of this primary for that reason (a standby
 *     of another cluster, one left on an abandoned timeline, an identity it may not read)</td></tr>
 *   <tr><td>omnium.retries</td><td>counter</td><td></td>
 *     <td>reads retried on the fallback pool after a replica conflict or lost connection</td></tr>
 *   <tr><td>omnium.fallback.active</td><td>gauge</td><td></td>
 *     <td>fallback connections lent out</td></tr>
 *   <tr><td>omnium.fallback.max</td><td>gauge</td><td></td><td>fallbackPoolSize</td></tr>
 *   <tr><td>omnium.lag.alert</td><td>gauge</td><td></td><td>1 while the lag alert fires</td></tr>
 *   <tr><td>omnium.heartbeat.writer</td><td>gauge</td><td></td>
 *     <td>1 while this process writes the heartbeat</td></tr>
 * </table>
 *
 * <p>Without Spring: {@code new OmniumMetrics().bindTo(registry)}; {@link #close()} removes the
 * meters again. A router that closes takes its meters with it; one that starts later gets them.
 */
public final class OmniumMetrics implements MeterBinder, AutoCloseable {
  private static final ObjectName ROUTERS = pattern("dev.omnium:type=Router,*");

  private final MBeanServer server;
  private final boolean poolMetrics;
  /** Strong references: Micrometer holds the objects of function meters only weakly. */
  private final Map<ObjectName, RouterMXBean> routers = new HashMap<>();
  private final Map<ObjectName, List<Meter>> meters = new HashMap<>();
  /** Per router, the lag of each server behind a replica address reaching several. */
  private final Map<ObjectName, MultiGauge> serverLags = new HashMap<>();
  private final NotificationListener listener = this::onNotification;
  private MeterRegistry registry;
  private ScheduledExecutorService refresher;

  /**
   * How often the servers behind each replica address are read again: JMX says when a router
   * starts or closes, not when it finds or forgets a server behind an address.
   */
  public static final int SERVERS_REFRESH_SECONDS = 5;

  /** Meters for the routers of the platform MBean server, HikariCP's pool meters included. */
  public OmniumMetrics() {
    this(ManagementFactory.getPlatformMBeanServer(), true);
  }

  /**
   * @param server where the routers' beans are registered (the platform MBean server)
   * @param poolMetrics whether the internal pools report HikariCP's meters to the bound registry
   *     (through {@link OmniumDriver#setPoolMetricsTrackerFactory}; JVM-wide, first registry only)
   */
  public OmniumMetrics(MBeanServer server, boolean poolMetrics) {
    this.server = server;
    this.poolMetrics = poolMetrics;
  }

  /**
   * Registers the meters of every router, and follows routers that start or close later.
   *
   * @param registry where the meters go; an instance binds to one registry
   * @throws IllegalStateException when already bound to another registry
   */
  @Override
  public synchronized void bindTo(MeterRegistry registry) {
    if (this.registry != null && this.registry != registry) {
      throw new IllegalStateException("OmniumMetrics is bound to another MeterRegistry already");
    }
    this.registry = registry;
    if (poolMetrics) {
      OmniumDriver.setPoolMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry));
    }
    try {
      // Listen first, then scan: a router that registers in between is bound once, not missed.
      NotificationFilter filter = n -> n instanceof MBeanServerNotification;
      server.addNotificationListener(MBeanServerDelegate.DELEGATE_NAME, listener, filter, null);
    } catch (InstanceNotFoundException e) {
      throw new IllegalStateException("MBean server without a delegate", e);
    }
    for (ObjectName name : server.queryNames(ROUTERS, null)) {
      bind(name);
    }
    if (refresher == null) {
      refresher = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "omnium-metrics-servers");
        t.setDaemon(true);
        return t;
      });
      refresher.scheduleWithFixedDelay(this::refreshServers, SERVERS_REFRESH_SECONDS,
          SERVERS_REFRESH_SECONDS, TimeUnit.SECONDS);
    }
  }

  /**
   * Registers a lag gauge for each server a router now finds behind a replica address, and
   * removes those of servers it forgot.
   */
  synchronized void refreshServers() {
    if (registry == null) {
      return;
    }
    for (Map.Entry<ObjectName, MultiGauge> e : serverLags.entrySet()) {
      RouterMXBean router = routers.get(e.getKey());
      String[] names;
      try {
        names = router.getReplicas();
      } catch (RuntimeException gone) {
        continue; // its unregistration removes its meters
      }
      List<MultiGauge.Row<?>> rows = new ArrayList<>();
      for (String name : names) {
        if (isServerBehind(name, names)) {
          rows.add(MultiGauge.Row.of(Tags.of("replica", name), router,
              r -> lagSeconds(r, name)));
        }
      }
      e.getValue().register(rows, false);
    }
  }

  /** {@code address/server}: one of the servers behind a listed address that reaches several. */
  static boolean isServerBehind(String name, String[] names) {
    for (String address : names) {
      if (address.indexOf('/') < 0 && name.startsWith(address + "/")) {
        return true;
      }
    }
    return false;
  }

  private synchronized void onNotification(Notification n, Object handback) {
    MBeanServerNotification sn = (MBeanServerNotification) n;
    ObjectName name = sn.getMBeanName();
    if (registry == null || !ROUTERS.apply(name)) {
      return;
    }
    if (MBeanServerNotification.REGISTRATION_NOTIFICATION.equals(n.getType())) {
      bind(name);
    } else if (MBeanServerNotification.UNREGISTRATION_NOTIFICATION.equals(n.getType())) {
      unbind(name);
    }
  }

  private void bind(ObjectName name) {
    if (routers.containsKey(name)) {
      return;
    }
    RouterMXBean router = JMX.newMXBeanProxy(server, name, RouterMXBean.class);
    String tag = routerTag(name);
    List<Meter> list = new ArrayList<>();
    list.add(counter(router, tag, RouterMXBean::getPrimaryStatements, "primary"));
    list.add(counter(router, tag, RouterMXBean::getReplicaRoutes, "replica"));
    list.add(counter(router, tag, RouterMXBean::getFallbackRoutes, "fallback"));
    list.add(FunctionCounter.builder("omnium.retries", router, safe(RouterMXBean::getRetries))
        .tag("router", tag)
        .description("Reads retried on the fallback pool after a replica conflict or a lost"
            + " connection")
        .register(registry));
    list.add(gauge("omnium.fallback.active", router, tag, RouterMXBean::getFallbackActive,
        "Fallback connections to the primary lent out now"));
    list.add(gauge("omnium.fallback.max", router, tag, RouterMXBean::getFallbackPoolSize,
        "The fallback pool's hard cap (fallbackPoolSize)"));
    list.add(gauge("omnium.lag.alert", router, tag, r -> r.isLagAlert() ? 1 : 0,
        "1 while the lag alert fires for at least one replica, else 0"));
    list.add(gauge("omnium.heartbeat.writer", router, tag, r -> r.isHeartbeatLeader() ? 1 : 0,
        "1 while this process holds the heartbeat writer lock, else 0"));
    String[] replicas;
    try {
      replicas = router.getReplicas();
    } catch (RuntimeException gone) {
      replicas = new String[0];
    }
    for (String replica : replicas) {
      if (isServerBehind(replica, replicas)) {
        continue; // refreshServers: it may be forgotten
      }
      list.add(Gauge.builder("omnium.replica.lag", router, r -> lagSeconds(r, replica))
          .tag("router", tag)
          .tag("replica", replica)
          .baseUnit("seconds")
          .description("Effective replica lag; +Inf while unknown (reads avoid the replica)")
          .strongReference(true)
          .register(registry));
      for (String reason : UNTRUSTED) {
        list.add(Gauge.builder("omnium.replica.untrusted", router,
                r -> reason.equals(state(r, replica)) ? 1 : 0)
            .tag("router", tag)
            .tag("replica", replica)
            .tag("reason", reason)
            .description("1 while the listed replica is not trusted as a standby of this primary,"
                + " for this reason (no read goes there), else 0")
            .strongReference(true)
            .register(registry));
      }
    }
    routers.put(name, router);
    meters.put(name, list);
    // The same name and tag keys as the listed addresses' lag gauges: one series per server.
    serverLags.put(name, MultiGauge.builder("omnium.replica.lag")
        .tag("router", tag)
        .baseUnit("seconds")
        .description("Effective replica lag; +Inf while unknown (reads avoid the replica)")
        .register(registry));
    refreshServers();
  }

  private void unbind(ObjectName name) {
    routers.remove(name);
    MultiGauge servers = serverLags.remove(name);
    if (servers != null) {
      servers.register(List.of(), false);
    }
    List<Meter> list = meters.remove(name);
    if (list != null) {
      for (Meter m : list) {
        registry.remove(m);
      }
    }
  }

  /**
   * Removes every meter this binder registered and stops following routers; pools created from
   * now on get no metrics tracker (HikariCP keeps the one a running pool has).
   */
  @Override
  public synchronized void close() {
    if (registry == null) {
      return;
    }
    if (poolMetrics) {
      OmniumDriver.setPoolMetricsTrackerFactory(null);
    }
    if (refresher != null) {
      refresher.shutdownNow();
      refresher = null;
    }
    try {
      server.removeNotificationListener(MBeanServerDelegate.DELEGATE_NAME, listener);
    } catch (JMException ignored) {
      // not listening
    }
    for (ObjectName name : new ArrayList<>(meters.keySet())) {
      unbind(name);
    }
  }

  /** One description for every route: Prometheus keeps one HELP line per name. */
  private FunctionCounter counter(RouterMXBean router, String tag,
      ToDoubleFunction<RouterMXBean> f, String route) {
    return FunctionCounter.builder("omnium.routes", router, safe(f))
        .tag("router", tag)
        .tag("route", route)
        .description("Work by route: primary = statements of read-write work; replica, fallback ="
            + " read-only units of work (transactions or autocommit statements)")
        .register(registry);
  }

  private Gauge gauge(String name, RouterMXBean router, String tag,
      ToDoubleFunction<RouterMXBean> f, String description) {
    return Gauge.builder(name, router, safe(f))
        .tag("router", tag)
        .description(description)
        .strongReference(true)
        .register(registry);
  }

  /** A router that closed between two scrapes answers NaN instead of failing the scrape. */
  private static ToDoubleFunction<RouterMXBean> safe(ToDoubleFunction<RouterMXBean> f) {
    return r -> {
      try {
        return f.applyAsDouble(r);
      } catch (RuntimeException gone) {
        return Double.NaN;
      }
    };
  }

  /**
   * The replica states (JMX {@code ReplicaStates}) of a listed server that is not a replica of the
   * primary: {@code omnium.replica.untrusted}'s {@code reason} tag.
   */
  static final List<String> UNTRUSTED = List.of("FOREIGN_CLUSTER", "DIVERGED_TIMELINE",
      "IDENTITY_UNKNOWN");

  /** The replica's state as JMX reports it; null when the router is gone. */
  static String state(RouterMXBean router, String replica) {
    try {
      return router.getReplicaStates().get(replica);
    } catch (RuntimeException gone) {
      return null;
    }
  }

  static double lagSeconds(RouterMXBean router, String replica) {
    try {
      Long ms = router.getEffectiveLagMillis().get(replica);
      if (ms == null) {
        return Double.NaN;
      }
      return ms < 0 ? Double.POSITIVE_INFINITY : ms / 1000.0;
    } catch (RuntimeException gone) {
      return Double.NaN;
    }
  }

  /** The router's name as the application set it (ObjectName quotes unusual names). */
  static String routerTag(ObjectName name) {
    String value = name.getKeyProperty("name");
    if (value == null) {
      return "";
    }
    return value.startsWith("\"") ? ObjectName.unquote(value) : value;
  }

  private static ObjectName pattern(String name) {
    try {
      return new ObjectName(name);
    } catch (MalformedObjectNameException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
