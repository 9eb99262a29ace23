package dev.omnium.sandbox.testkit;

import dev.omnium.jdbc.RouterMXBean;
import java.lang.management.ManagementFactory;
import javax.management.JMX;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/** A router's JMX bean as a typed proxy, read the way a monitoring tool reads it. */
public final class RouterBean {
  private RouterBean() { }

  /**
   * The bean of the router whose URL carries {@code applicationName=app}.
   *
   * @param app the router's name (its base application name)
   * @return a proxy on the platform MBean server; its getters fail while no such router runs
   * @throws MalformedObjectNameException when {@code app} cannot be part of an object name
   */
  public static RouterMXBean of(String app) throws MalformedObjectNameException {
    return JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(), name(app),
        RouterMXBean.class);
  }

  /**
   * The object name omnium registers a router under.
   *
   * @param app the router's name
   * @return {@code dev.omnium:type=Router,name=app}
   * @throws MalformedObjectNameException when {@code app} cannot be part of an object name
   */
  public static ObjectName name(String app) throws MalformedObjectNameException {
    return new ObjectName("dev.omnium:type=Router,name=" + app);
  }
}
