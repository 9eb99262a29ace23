package dev.omnium.jdbc;

import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The client-side bound of every route: pgjdbc's {@code socketTimeout}, so a server that accepts
 * TCP and never answers (frozen, black-holed) costs a bounded wait. The server's own
 * statement_timeout cannot help when the server does not run at all. A {@code socketTimeout},
 * {@code connectTimeout} or {@code loginTimeout} the user gave always wins. On the read routes
 * (replica, fallback) a watchdog keeps it instead of the kernel ({@link DeadlineSockets}).
 */
final class ClientTimeouts {
  private ClientTimeouts() { }

  /**
   * @return {@code p}, with the bounds of {@code route} added where the user set none
   */
  static Properties apply(OmniumConfig config, Route route, Properties p) {
    long interval = config.heartbeatInterval().toMillis();
    long margin = config.clientTimeoutMargin().toMillis();
    switch (route) {
      case WATCHER:
        // A probe takes milliseconds; the watcher must notice a frozen server within a few beats.
        putSeconds(p, "socketTimeout", Math.max(2_000, 3 * interval));
        p.putIfAbsent("connectTimeout", "2");
        p.putIfAbsent("loginTimeout", "3");
        break;
      case HEARTBEAT:
        putSeconds(p, "socketTimeout", Math.max(10_000, 5 * interval));
        p.putIfAbsent("connectTimeout", "5");
        break;
      case REPLICA:
        putSeconds(p, "socketTimeout", config.replicaStatementTimeout().toMillis() + margin);
        p.putIfAbsent("connectTimeout", "5");
        p.putIfAbsent("loginTimeout", "5");
        keptByWatchdog(p);
        break;
      default:
        // PRIMARY and FALLBACK: the statement timeout is the server's bound, this the client's.
        // pgjdbc applies socketTimeout to the startup exchange too, so a login is bounded as well.
        putSeconds(p, "socketTimeout", config.statementTimeout().toMillis() + margin);
        p.putIfAbsent("connectTimeout", "10");
        if (route == Route.FALLBACK) keptByWatchdog(p);
        break;
    }
    return p;
  }

  /**
   * Read sessions read without a kernel timer: their socketTimeout is kept by
   * {@link DeadlineSockets} (the same bound, the same error), unless the user named a socket
   * factory of their own or pgjdbc cannot load omnium's.
   */
  private static void keptByWatchdog(Properties p) {
    if (p.getProperty("socketFactory") == null && DeadlineSockets.usable()) {
      p.setProperty("socketFactory", DeadlineSockets.Factory.class.getName());
    }
  }

  /** The socket timeout {@code route} gets, in whole seconds (what pgjdbc accepts). */
  static long socketTimeoutSeconds(OmniumConfig config, Route route) {
    return Long.parseLong(apply(config, route, new Properties()).getProperty("socketTimeout"));
  }

  private static void putSeconds(Properties p, String key, long millis) {
    long seconds = Math.min(Integer.MAX_VALUE, TimeUnit.MILLISECONDS.toSeconds(millis + 999));
    p.putIfAbsent(key, Long.toString(seconds));
  }
}
