package dev.omnium.it.reliability;

import static org.junit.jupiter.api.Assertions.fail;

import dev.omnium.sandbox.testkit.PgSandbox;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.security.SecureRandom;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;

/**
 * Looks for passwords where they must never be: log lines, exceptions (messages, causes, suppressed,
 * stack), JMX attributes, {@code toString()}. Every suite puts {@link #PASSWORD} in its URLs (trust
 * clusters ignore it, so it only travels as configuration) and checks its captured log lines for it.
 */
final class SecretScan {
  /** A distinctive password: 28 characters nothing else in a log line could contain by chance. */
  static final String PASSWORD = "OmS3cret" + random(20);

  private final List<String> secrets;
  private final List<String> findings = new ArrayList<>();
  private int scanned;

  SecretScan(String... secrets) {
    this.secrets = List.of(secrets);
  }

  static String random(int n) {
    String alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    SecureRandom r = new SecureRandom();
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) b.append(alphabet.charAt(r.nextInt(alphabet.length())));
    return b.toString();
  }

  /**
   * A suite's cluster: its URLs carry {@link #PASSWORD}, so that the suite's log scan
   * ({@link LogScanned}) has something to find if the driver ever logs a URL's password.
   */
  static PgSandbox.Builder sandbox(int replicas) {
    return PgSandbox.builder().replicas(replicas).urlPassword(PASSWORD);
  }

  /** How many texts were looked at. */
  int scanned() {
    return scanned;
  }

  void text(String where, String text) {
    scanned++;
    if (text == null) return;
    for (String s : secrets) {
      int at = text.indexOf(s);
      if (at >= 0) {
        String masked = text.replace(s, "<SECRET>");
        int from = Math.max(0, masked.indexOf("<SECRET>") - 200);
        findings.add(where + ": ..." + masked.substring(from, Math.min(masked.length(), from + 400)) + "...");
      }
    }
  }

  /** The whole exception as printed (causes, suppressed, stack), plus every message and toString in it. */
  void exception(String where, Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    text(where + " (stack trace)", w.toString());
    List<Throwable> seen = new ArrayList<>();
    collect(t, seen);
    for (Throwable x : seen) {
      text(where + " (" + x.getClass().getName() + " message)", x.getMessage());
      text(where + " (" + x.getClass().getName() + " localized message)", x.getLocalizedMessage());
      text(where + " (" + x.getClass().getName() + " toString)", x.toString());
    }
  }

  private static void collect(Throwable t, List<Throwable> seen) {
    if (t == null) return;
    for (Throwable s : seen) if (s == t) return;
    seen.add(t);
    collect(t.getCause(), seen);
    for (Throwable s : t.getSuppressed()) collect(s, seen);
    if (t instanceof SQLException) collect(((SQLException) t).getNextException(), seen);
  }

  void toStringOf(String where, Object o) {
    text(where + " toString()", String.valueOf(o));
  }

  void lines(String where, Collection<String> lines) {
    int i = 0;
    for (String l : lines) text(where + " line " + (i++), l);
  }

  /** Every readable attribute of every dev.omnium and com.zaxxer.hikari MBean; returns how many were read. */
  int jmx() throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    int read = 0;
    for (String domain : List.of("dev.omnium", "com.zaxxer.hikari")) {
      for (ObjectName name : server.queryNames(new ObjectName(domain + ":*"), null)) {
        text("JMX name", name.toString());
        for (MBeanAttributeInfo a : server.getMBeanInfo(name).getAttributes()) {
          if (!a.isReadable()) continue;
          String value;
          try {
            value = deep(server.getAttribute(name, a.getName()));
          } catch (Exception e) {
            exception("JMX " + name + "." + a.getName() + " (reading failed)", e);
            value = "";
          }
          text("JMX " + name + "." + a.getName(), value);
          read++;
        }
      }
    }
    return read;
  }

  private static String deep(Object o) {
    if (o == null) return "null";
    if (o instanceof Object[]) {
      StringBuilder b = new StringBuilder("[");
      for (Object x : (Object[]) o) b.append(deep(x)).append(',');
      return b.append(']').toString();
    }
    if (o instanceof CompositeData) {
      CompositeData c = (CompositeData) o;
      StringBuilder b = new StringBuilder("{");
      for (String k : c.getCompositeType().keySet()) b.append(k).append('=').append(deep(c.get(k))).append(',');
      return b.append('}').toString();
    }
    if (o instanceof TabularData) {
      StringBuilder b = new StringBuilder("{");
      for (Object row : ((TabularData) o).values()) b.append(deep(row)).append(';');
      return b.append('}').toString();
    }
    if (o instanceof Map) {
      StringBuilder b = new StringBuilder("{");
      for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
        b.append(deep(e.getKey())).append('=').append(deep(e.getValue())).append(',');
      }
      return b.append('}').toString();
    }
    if (o instanceof Collection) {
      StringBuilder b = new StringBuilder("[");
      for (Object x : (Collection<?>) o) b.append(deep(x)).append(',');
      return b.append(']').toString();
    }
    if (o.getClass().isArray()) return java.util.Arrays.deepToString(new Object[] {o});
    return String.valueOf(o);
  }

  void assertClean() {
    if (!findings.isEmpty()) {
      fail("a password escaped in " + findings.size() + " place(s) (shown as <SECRET>):\n" + String.join("\n", findings));
    }
  }
}
