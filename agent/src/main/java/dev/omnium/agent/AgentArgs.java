package dev.omnium.agent;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The agent's argument: {@code key=value&key=value...} with the keys of the {@code jdbc:omnium:}
 * URL (values percent-decoded like URL parameters), plus {@code match}, a substring a JDBC URL must
 * contain to be taken over (default: every {@code jdbc:postgresql:} URL). When the
 * {@code -javaagent} argument is absent or blank, {@code OMNIUM_AGENT_ARGS} is read instead.
 */
final class AgentArgs {
  static final String ENV = "OMNIUM_AGENT_ARGS";
  static final String MATCH = "match";
  static final String FORM = "key=value&key=value... with the keys of the jdbc:omnium: URL, e.g. "
      + "replica=10.0.0.2:5432&maxAge=5s&applicationName=api";

  /** Where the argument came from, for messages. */
  final String source;
  /** Driver keys, decoded, in order; never {@code match}. */
  final Map<String, String> keys;
  /** Null: every jdbc:postgresql: URL. */
  final String match;

  private AgentArgs(String source, Map<String, String> keys, String match) {
    this.source = source;
    this.keys = keys;
    this.match = match;
  }

  /** Thrown for a malformed argument; the message names the token and the expected form. */
  static final class BadArgument extends Exception {
    private static final long serialVersionUID = 1L;

    BadArgument(String message) {
      super(message);
    }
  }

  /**
   * The argument to use: {@code agentArgument} unless it is null or blank, else the environment
   * variable; null when neither says anything.
   */
  static AgentArgs resolve(String agentArgument, Map<String, String> env) throws BadArgument {
    if (agentArgument != null && !agentArgument.isBlank()) {
      return parse(agentArgument, "the -javaagent argument");
    }
    String fromEnv = env.get(ENV);
    if (fromEnv != null && !fromEnv.isBlank()) {
      return parse(fromEnv, ENV);
    }
    return null;
  }

  static AgentArgs parse(String text, String source) throws BadArgument {
    Map<String, String> keys = new LinkedHashMap<>();
    String match = null;
    String trimmed = text.trim();
    // Tolerate quoting that survived a shell or a YAML file: 'replica=...'.
    if (trimmed.length() >= 2 && (trimmed.charAt(0) == '\'' || trimmed.charAt(0) == '"')
        && trimmed.charAt(trimmed.length() - 1) == trimmed.charAt(0)) {
      trimmed = trimmed.substring(1, trimmed.length() - 1);
    }
    if (trimmed.startsWith("?")) trimmed = trimmed.substring(1);
    for (String token : trimmed.split("&")) {
      String t = token.trim();
      if (t.isEmpty()) continue;
      int eq = t.indexOf('=');
      if (eq <= 0) {
        throw new BadArgument((eq == 0 ? "an empty key in '" : "'") + visible(t) + "' in " + source
            + (eq == 0 ? "" : " is not key=value") + " (expected " + FORM + ")");
      }
      String key = decode(t.substring(0, eq).trim(), source, "key");
      String value = decode(t.substring(eq + 1).trim(), source, key);
      if (MATCH.equals(key)) {
        if (value.isEmpty()) throw new BadArgument("match is empty in " + source
            + " (expected a substring of the JDBC URLs to take over, e.g. match=orders-db)");
        match = value;
      } else {
        keys.put(key, value);
      }
    }
    return new AgentArgs(source, Collections.unmodifiableMap(keys), match);
  }

  /** The driver keys as a URL query (no leading '?'), each value percent-encoded. */
  String query() {
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, String> e : keys.entrySet()) {
      if (sb.length() > 0) sb.append('&');
      sb.append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)).append('=')
          .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
    }
    return sb.toString();
  }

  /** True when {@code jdbcUrl} is to be taken over. */
  boolean matches(String jdbcUrl) {
    return jdbcUrl.startsWith("jdbc:postgresql:") && (match == null || jdbcUrl.contains(match));
  }

  /** The settings for a log line, secrets masked. */
  String describe() {
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, String> e : keys.entrySet()) {
      if (sb.length() > 0) sb.append('&');
      sb.append(e.getKey()).append('=').append(secret(e.getKey()) ? "***" : e.getValue());
    }
    if (match != null) sb.append(sb.length() > 0 ? "&" : "").append("match=").append(match);
    return sb.length() == 0 ? "(no keys)" : sb.toString();
  }

  static boolean secret(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    return k.contains("password") || k.contains("secret") || k.contains("sslkey") || k.contains("token");
  }

  private static String decode(String raw, String source, String what) throws BadArgument {
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new BadArgument("invalid percent-encoding in " + (secret(what) ? "the value of " + what : "'" + raw + "'")
          + " in " + source + " (write a literal % as %25)");
    }
  }

  /** A token for an error message: never a password's value. */
  private static String visible(String token) {
    return secret(token) ? token.substring(0, Math.min(token.length(), 8)) + "..." : token;
  }
}
