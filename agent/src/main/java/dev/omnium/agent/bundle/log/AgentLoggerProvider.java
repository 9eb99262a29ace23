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
  static final int ERROR = 0;
  static final int WARN = 1;
  static final int INFO = 2;
  static final int DEBUG = 3;
  static final int TRACE = 4;

  private final IMarkerFactory markers = new BasicMarkerFactory();
  private final MDCAdapter mdc = new NOPMDCAdapter();
  private final Factory factory = new Factory(threshold());

  @Override public ILoggerFactory getLoggerFactory() { return factory; }
  @Override public IMarkerFactory getMarkerFactory() { return markers; }
  @Override public MDCAdapter getMDCAdapter() { return mdc; }
  @Override public String getRequestedApiVersion() { return "2.0.99"; }
  @Override public void initialize() { }

  static int threshold() {
    String v = null;
    try {
      v = System.getProperty("omnium.agent.log");
      if (v == null) v = System.getenv("OMNIUM_AGENT_LOG");
    } catch (RuntimeException ignored) {
      // keep the default
    }
    if (v == null) return INFO;
    switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "off":
      case "error":
        return ERROR;
      case "warn":
        return WARN;
      case "debug":
        return DEBUG;
      case "trace":
        return TRACE;
      default:
        return INFO;
    }
  }

  static final class Factory implements ILoggerFactory {
    private final int threshold;
    private final ConcurrentMap<String, Logger> loggers = new ConcurrentHashMap<>();

    Factory(int threshold) {
      this.threshold = threshold;
    }

    @Override
    public Logger getLogger(String name) {
      return loggers.computeIfAbsent(name, n -> {
        // A pool's routine (starting, closing) is no news for the application's operator.
        boolean pool = n.contains(".hikari.");
        return new StderrLogger(n, pool && threshold < DEBUG ? Math.min(threshold, WARN) : threshold);
      });
    }
  }

  static final class StderrLogger extends LegacyAbstractLogger {
    private static final long serialVersionUID = 1L;
    private final int threshold;
    private final String shortName;

    StderrLogger(String name, int threshold) {
      this.name = name;
      this.threshold = threshold;
      int dot = name.lastIndexOf('.');
      this.shortName = dot < 0 ? name : name.substring(dot + 1);
    }

    @Override public boolean isTraceEnabled() { return threshold >= TRACE; }
    @Override public boolean isDebugEnabled() { return threshold >= DEBUG; }
    @Override public boolean isInfoEnabled() { return threshold >= INFO; }
    @Override public boolean isWarnEnabled() { return threshold >= WARN; }
    @Override public boolean isErrorEnabled() { return threshold >= ERROR; }

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
      if (throwable != null && threshold >= DEBUG) {
        throwable.printStackTrace();
      }
    }
  }
}
