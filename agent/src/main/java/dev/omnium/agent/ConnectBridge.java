package dev.omnium.agent;

import java.util.Properties;
import java.util.function.Function;

/**
 * What the advice inlined into {@code org.postgresql.Driver.connect} calls. The advice reaches it
 * by reflection through the system class loader (where {@code -javaagent} and attach put the agent
 * jar), so it links in whatever class loader defined pgjdbc (the system one, Spring Boot's
 * {@code LaunchedClassLoader}, a web application's, an OSGi bundle's) and the inlined code itself
 * only references {@code java.base}. No class goes on the bootstrap path: no temporary jar, and the
 * JVM keeps class data sharing for application classes.
 */
public final class ConnectBridge {
  /** The class and field the advice looks up (constants, inlined by javac into the advice). */
  static final String CLASS_NAME = "dev.omnium.agent.ConnectBridge";
  static final String FIELD_NAME = "DISPATCH";
  /**
   * Set by the omnium driver on every physical connect it makes (PgConnector.PHYSICAL_MARKER): such a
   * connect is the driver's own and goes to pgjdbc untouched.
   */
  static final String PHYSICAL_MARKER = "omnium.physical";

  /** {@code {pgDriver, url, info}} to the connection to return instead of pgjdbc's, or null. Never throws. */
  public static final Function<Object[], Object> DISPATCH = ConnectBridge::dispatch;

  private static volatile ConnectHook hook;
  /** A connect made on this thread while the hook runs (the driver's own, say) is never taken over. */
  private static final ThreadLocal<Boolean> INSIDE = new ThreadLocal<>();

  private ConnectBridge() { }

  static void install(ConnectHook h) {
    hook = h;
  }

  static ConnectHook installed() {
    return hook;
  }

  private static Object dispatch(Object[] call) {
    try {
      ConnectHook h = hook;
      if (h == null || call == null || call.length != 3 || !(call[1] instanceof String)) return null;
      String url = (String) call[1];
      Properties info = (Properties) call[2];
      if (!url.startsWith("jdbc:postgresql:") || INSIDE.get() != null) return null;
      if (info != null && info.getProperty(PHYSICAL_MARKER) != null) return null;
      INSIDE.set(Boolean.TRUE);
      try {
        return h.connect(call[0], url, info);
      } finally {
        INSIDE.remove();
      }
    } catch (Throwable t) {
      return null; // the hook logs its own failures; pgjdbc connects as without the agent
    }
  }
}
