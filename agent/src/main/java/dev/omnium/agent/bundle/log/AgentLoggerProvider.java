package dev.omnium.agent.bundle.log;

import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The SLF4J provider of the agent's private (relocated) slf4j-api: the driver's and HikariCP's log
 * lines, one line each on stderr, {@code [omnium-agent] LEVEL Logger: message}. It never touches
 * the application's logging. Threshold: {@code -Domnium.agent.log} or {@code OMNIUM_AGENT_LOG}
 * ({@code error|warn|info|debug}, default {@code info}); HikariCP's own lines start at WARN unless
 * the threshold is debug.
 */
public final class AgentLoggerProvider implements SLF4JServiceProvider {
  private final IMarkerFactory markers = new BasicMarkerFactory();
  private final MDCAdapter mdc = new NOPMDCAdapter();
  private final Factory factory = new Factory(threshold(setting()));

  @Override public ILoggerFactory getLoggerFactory() { return factory; }
  @Override public IMarkerFactory getMarkerFactory() { return markers; }
  @Override public MDCAdapter getMDCAdapter() { return mdc; }
  @Override public String getRequestedApiVersion() { return "2.0.99"; }
  @Override public void initialize() { }

  /**
   * The most detailed level printed for {@code setting}, a level name in any case ({@code off}
   * prints errors only); INFO when absent or unknown.
   */
  static Level threshold(String setting) {
    if (setting == null) return Level.INFO;
    String name = setting.trim().toUpperCase(Locale.ROOT);
    if (name.equals("OFF")) return Level.ERROR;
    for (Level level : Level.values()) {
      if (level.name().equals(name)) return level;
    }
    return Level.INFO;
  }

  private static String setting() {
    try {
      String v = System.getProperty("omnium.agent.log");
      return v != null ? v : System.getenv("OMNIUM_AGENT_LOG");
    } catch (RuntimeException e) {
      return null; // a security manager: keep the default
    }
  }

  /** Whether a logger at {@code threshold} prints {@code level} (slf4j: more detail, lower int). */
  static boolean prints(Level threshold, Level level) {
    return level.toInt() >= threshold.toInt();
  }

  static final class Factory implements ILoggerFactory {
    private final Level threshold;
    private final ConcurrentMap<String, Logger> loggers = new ConcurrentHashMap<>();

    Factory(Level threshold) {
      this.threshold = threshold;
    }

    @Override
    public Logger getLogger(String name) {
      return loggers.computeIfAbsent(name, n -> {
        // A pool's routine (starting, closing) is no news for the application's operator.
        boolean quieter = n.contains(".hikari.") && !prints(threshold, Level.DEBUG)
            && prints(threshold, Level.INFO);
        return new StderrLogger(n, quieter ? Level.WARN : threshold);
      });
    }
  }

  static final class StderrLogger extends LegacyAbstractLogger {
    private static final long serialVersionUID = 1L;
    private final Level threshold;
    private final String shortName;

    StderrLogger(String name, Level threshold) {
      this.name = name;
      this.threshold = threshold;
      int dot = name.lastIndexOf('.');
      this.shortName = dot < 0 ? name : name.substring(dot + 1);
    }

    @Override public boolean isTraceEnabled() { return prints(threshold, Level.TRACE); }
    @Override public boolean isDebugEnabled() { return prints(threshold, Level.DEBUG); }
    @Override public boolean isInfoEnabled() { return prints(threshold, Level.INFO); }
    @Override public boolean isWarnEnabled() { return prints(threshold, Level.WARN); }
    @Override public boolean isErrorEnabled() { return prints(threshold, Level.ERROR); }

    @Override
    protected String getFullyQualifiedCallerName() {
      return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern,
        Object[] arguments, Throwable throwable) {
      String message = MessageFormatter.basicArrayFormat(pattern, arguments);
      StringBuilder line = new StringBuilder(96)
          .append("[omnium-agent] ").append(level).append(' ').append(shortName).append(": ")
          .append(message);
      if (throwable != null) {
        line.append(" (").append(throwable).append(')');
      }
      System.err.println(line);
      if (throwable != null && prints(threshold, Level.DEBUG)) {
        throwable.printStackTrace();
      }
    }
  }
}
