package dev.omnium.agent;

import java.sql.SQLException;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides, for each pgjdbc connect that reaches the bridge, whether the omnium driver takes it
 * over, and does it. Any failure is logged once and answered with null: pgjdbc then connects as
 * without the agent.
 */
final class ConnectHook {
  /** One bundle per org.postgresql.Driver class (so per pgjdbc copy), released with that class. */
  private static final ClassValue<Object> BUNDLES = new ClassValue<>() {
    @Override
    protected Object computeValue(Class<?> pgDriver) {
      ClassLoader pgLoader = pgDriver.getClassLoader();
      try {
        Bundle b = Bundle.forLoader(pgLoader);
        AgentLog.debug("driver bundle defined for pgjdbc in " + pgLoader);
        return b;
      } catch (Throwable t) {
        AgentLog.error("cannot load the omnium driver next to pgjdbc in " + pgLoader + ": " + t
            + ". Connections from it run as plain pgjdbc.");
        return t;
      }
    }
  };
  private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();
  private static final int MAX_LOGGED = 256;

  private final AgentArgs args;
  private final String query;
  /**
   * The bundle once these settings passed the driver's own check next to that pgjdbc (at premain a
   * Spring Boot fat jar's pgjdbc is not visible yet, so only this check is complete); FALSE when
   * they did not: that pgjdbc then stays untouched, after one ERROR line.
   */
  private final ClassValue<Object> checked = new ClassValue<>() {
    @Override
    protected Object computeValue(Class<?> pgDriver) {
      Object b = BUNDLES.get(pgDriver);
      if (!(b instanceof Bundle)) return Boolean.FALSE;
      try {
        String problem = ((Bundle) b).validate(args);
        if (problem == null) return b;
        AgentLog.error("bad argument (" + args.source + "): " + problem
            + ". Connections from pgjdbc in " + pgDriver.getClassLoader() + " run as without the agent.");
      } catch (Throwable t) {
        AgentLog.error("cannot check the settings next to pgjdbc in " + pgDriver.getClassLoader() + ": " + t
            + ". Its connections run as without the agent.");
      }
      return Boolean.FALSE;
    }
  };

  ConnectHook(AgentArgs args) {
    this.args = args;
    this.query = args.query();
  }

  /**
   * The connection to hand out for this pgjdbc connect, or the exception to throw instead (the
   * login failed as pgjdbc's would: the application gets pgjdbc's own error), or null to let
   * pgjdbc connect.
   */
  Object connect(Object pgDriver, String url, Properties info) {
    if (!args.matches(url) || calledByPgjdbcInternals()) return null;
    Object b = checked.get(pgDriver.getClass());
    if (!(b instanceof Bundle)) return null;
    try {
      return ((Bundle) b).connect(url, info, query);
    } catch (SQLException e) {
      once("not taking over " + safeUrl(url) + ": " + e.getMessage()
          + ". This connection runs as plain pgjdbc.", false);
    } catch (Throwable t) {
      once("omnium driver failed for " + safeUrl(url) + ": " + t
          + ". This connection runs as plain pgjdbc.", true);
    }
    return null;
  }

  /**
   * pgjdbc code that casts the connection it opens to its own class: such a connect must get
   * pgjdbc's connection. {@code PGXADataSource.getXAConnection} casts to {@code BaseConnection}
   * (and XA transactions belong on the primary anyway).
   */
  private static final Set<String> NEEDS_PGJDBC_CONNECTION = Set.of("org.postgresql.xa.PGXADataSource");
  private static final StackWalker WALKER = StackWalker.getInstance();

  /** A few microseconds per connect; the caller is a handful of frames up (DriverManager, the data source). */
  private static boolean calledByPgjdbcInternals() {
    return WALKER.walk(frames -> frames.limit(32)
        .anyMatch(f -> NEEDS_PGJDBC_CONNECTION.contains(f.getClassName())));
  }

  /** One log line per distinct message, so a broken setting never floods the application's log. */
  private static void once(String message, boolean error) {
    if (LOGGED.size() < MAX_LOGGED && LOGGED.add(message)) {
      if (error) AgentLog.error(message);
      else AgentLog.warn(message);
    }
  }

  /** Host and database only: the query may hold a password. */
  static String safeUrl(String url) {
    int q = url.indexOf('?');
    return q < 0 ? url : url.substring(0, q) + "?...";
  }
}
