package dev.omnium.jdbc;

import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One server endpoint. {@code host} is kept without brackets; {@link #toString()} adds them
 * back for IPv6 so the result can be pasted into a pgjdbc URL.
 */
record HostSpec(String host, int port) {

  static final int DEFAULT_PORT = 5432;

  private static final String EXPECTED = OmniumProperty.Kind.HOSTS.expected;

  HostSpec {
    if (host == null || host.isEmpty()) {
      throw new IllegalArgumentException("host is empty");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
  }

  /** Parses {@code host}, {@code host:port}, {@code [v6]} or {@code [v6]:port}. */
  static HostSpec parse(String key, String spec) throws SQLException {
    String s = spec == null ? "" : spec.trim();
    if (s.isEmpty()) {
      throw invalid(key, spec, "empty host");
    }
    String host;
    String port = null;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0) {
        throw invalid(key, spec, "missing ] after IPv6 address");
      }
      host = s.substring(1, close);
      if (host.indexOf(':') < 0) {
        throw invalid(key, spec, "brackets are only for IPv6 addresses");
      }
      String rest = s.substring(close + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) {
          throw invalid(key, spec, "unexpected text after ]");
        }
        port = rest.substring(1);
      }
    } else {
      int colon = s.indexOf(':');
      if (colon >= 0 && s.indexOf(':', colon + 1) >= 0) {
        // pgjdbc would read the last group as a port: refuse the ambiguity instead.
        throw invalid(key, spec, "IPv6 addresses need brackets");
      }
      host = colon < 0 ? s : s.substring(0, colon);
      port = colon < 0 ? null : s.substring(colon + 1);
      if (host.isEmpty()) {
        throw invalid(key, spec, "empty host");
      }
    }
    for (int i = 0; i < host.length(); i++) {
      char c = host.charAt(i);
      if (Character.isWhitespace(c) || "/?#@,[]".indexOf(c) >= 0) {
        throw invalid(key, spec, "unexpected character '" + c + "' in host");
      }
    }
    return new HostSpec(host, port == null ? DEFAULT_PORT : parsePort(key, spec, port));
  }

  /** Parses a comma-separated list; empty entries and duplicates are errors naming the key. */
  static List<HostSpec> parseList(String key, String value) throws SQLException {
    if (value == null || value.trim().isEmpty()) {
      throw invalid(key, value == null ? "" : value, "empty host list");
    }
    Set<HostSpec> hosts = new LinkedHashSet<>();
    for (String entry : value.split(",", -1)) {
      if (entry.trim().isEmpty()) {
        throw invalid(key, value, "empty entry in host list");
      }
      HostSpec h = parse(key, entry);
      if (!hosts.add(h)) {
        throw invalid(key, value, "duplicate host " + h);
      }
    }
    return List.copyOf(hosts);
  }

  @Override
  public String toString() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  private static int parsePort(String key, String spec, String port) throws SQLException {
    if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw invalid(key, spec, "port must be a number between 1 and 65535");
    }
    int p = Integer.parseInt(port);
    if (p < 1 || p > 65535) {
      throw invalid(key, spec, "port must be between 1 and 65535");
    }
    return p;
  }

  private static SQLException invalid(String key, String value, String why) {
    return OmniumProperty.invalidValue(key, value, why + "; expected " + EXPECTED);
  }
}
