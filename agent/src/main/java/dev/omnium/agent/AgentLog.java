package dev.omnium.agent;

import java.util.Locale;

/**
 * The agent's own one-line messages, on stderr: {@code [omnium-agent] LEVEL message}. The driver's
 * log lines inside the agent use the same format (see the bundle's slf4j provider). The threshold
 * is {@code -Domnium.agent.log=error|warn|info|debug} or {@code OMNIUM_AGENT_LOG}, default info.
 */
final class AgentLog {
  static final int ERROR = 0;
  static final int WARN = 1;
  static final int INFO = 2;
  static final int DEBUG = 3;

  private static final int THRESHOLD = threshold();

  private AgentLog() { }

  static void error(String message) {
    log(ERROR, "ERROR", message);
  }

  static void warn(String message) {
    log(WARN, "WARN", message);
  }

  static void info(String message) {
    log(INFO, "INFO", message);
  }

  static void debug(String message) {
    log(DEBUG, "DEBUG", message);
  }

  static boolean debugEnabled() {
    return THRESHOLD >= DEBUG;
  }

  private static void log(int level, String name, String message) {
    if (level <= THRESHOLD) {
      System.err.println("[omnium-agent] " + name + " " + message);
    }
  }

  static int threshold() {
    String v = null;
    try {
      v = System.getProperty("omnium.agent.log");
      if (v == null) v = System.getenv("OMNIUM_AGENT_LOG");
    } catch (RuntimeException ignored) {
      // a security manager: keep the default
    }
    if (v == null) return INFO;
    switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "off":
      case "error":
        return ERROR;
      case "warn":
        return WARN;
      case "debug":
      case "trace":
        return DEBUG;
      default:
        return INFO;
    }
  }
}
