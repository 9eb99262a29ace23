package dev.omnium.it.reliability;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.stream.Collectors;

/**
 * The test logging capture: every line the JVM writes to {@code System.err} and {@code System.out}
 * (slf4j-simple, the test binding, writes to {@code System.err} and looks the stream up on every
 * line) and every java.util.logging record (pgjdbc logs there), kept in memory in order and still
 * passed on to the original streams. Installed once per JVM, on first use; suites take a
 * {@link #mark()} and look at the lines written since.
 */
public final class LogCapture {
  private static final List<String> LINES = new ArrayList<>();
  private static volatile boolean installed;

  private LogCapture() { }

  static synchronized void install() {
    if (installed) return;
    installed = true;
    System.setErr(tee(System.err, "err"));
    System.setOut(tee(System.out, "out"));
    Handler jul = new Handler() {
      @Override
      public void publish(LogRecord r) {
        StringBuilder b = new StringBuilder("JUL ").append(r.getLevel()).append(' ')
            .append(r.getLoggerName()).append(" - ").append(new java.util.logging.SimpleFormatter().formatMessage(r));
        if (r.getThrown() != null) {
          StringWriter w = new StringWriter();
          r.getThrown().printStackTrace(new PrintWriter(w));
          b.append('\n').append(w);
        }
        for (String line : b.toString().split("\n")) add(line);
      }

      @Override public void flush() { }

      @Override public void close() { }
    };
    jul.setLevel(Level.ALL);
    LogManager.getLogManager().getLogger("").addHandler(jul);
  }

  private static PrintStream tee(PrintStream original, String name) {
    OutputStream lines = new OutputStream() {
      private final ByteArrayOutputStream current = new ByteArrayOutputStream();

      @Override
      public synchronized void write(int b) {
        original.write(b);
        collect(b);
      }

      @Override
      public synchronized void write(byte[] b, int off, int len) {
        original.write(b, off, len); // one call: the surefire capture behind it encodes per call
        for (int i = off; i < off + len; i++) collect(b[i]);
      }

      private void collect(int b) {
        if (b == '\n') {
          add(current.toString(StandardCharsets.UTF_8));
          current.reset();
        } else {
          current.write(b);
        }
      }

      @Override
      public void flush() {
        original.flush();
      }
    };
    return new PrintStream(lines, true, StandardCharsets.UTF_8);
  }

  private static void add(String line) {
    synchronized (LINES) {
      LINES.add(line.endsWith("\r") ? line.substring(0, line.length() - 1) : line);
    }
  }

  /** The position of the next captured line. */
  public static int mark() {
    install();
    synchronized (LINES) {
      return LINES.size();
    }
  }

  /** Every line captured since {@code mark}. */
  public static List<String> since(int mark) {
    synchronized (LINES) {
      return new ArrayList<>(LINES.subList(Math.min(mark, LINES.size()), LINES.size()));
    }
  }

  /** Lines since {@code mark} that match. */
  static List<String> since(int mark, Predicate<String> filter) {
    return since(mark).stream().filter(filter).collect(Collectors.toList());
  }
}
