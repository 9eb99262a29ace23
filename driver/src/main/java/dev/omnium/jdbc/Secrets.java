package dev.omnium.jdbc;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Rendering without secrets. Every message, log line and {@code toString()} that shows a
 * URL or properties goes through here, so "no password anywhere" is checked in one place.
 */
final class Secrets {

  static final String MASK = "***";

  private Secrets() {
  }

  /**
   * True for keys whose value is a secret: anything containing "password" (password,
   * replicaPassword, sslpassword — the sslkey passphrase), "passphrase" or "secret", in any case.
   */
  static boolean isSecretKey(String key) {
    if (key == null) {
      return false;
    }
    String k = key.toLowerCase(Locale.ROOT);
    return k.contains("password") || k.contains("passphrase") || k.contains("secret");
  }

  /**
   * The URL with secret query values and any {@code user:password@} user info replaced by
   * {@code ***}. Works on any JDBC URL, also malformed ones (it is used in error messages).
   */
  static String maskUrl(String url) {
    if (url == null) {
      return null;
    }
    int q = url.indexOf('?');
    String head = q < 0 ? url : url.substring(0, q);
    head = maskUserInfo(head);
    if (q < 0) {
      return head;
    }
    StringBuilder sb = new StringBuilder(head).append('?');
    String[] tokens = url.substring(q + 1).split("&", -1);
    for (int i = 0; i < tokens.length; i++) {
      if (i > 0) {
        sb.append('&');
      }
      String token = tokens[i];
      int eq = token.indexOf('=');
      String key = eq < 0 ? token : token.substring(0, eq);
      // Keys are compared decoded too, so "pass%77ord" cannot sneak a secret through.
      if (eq >= 0 && (isSecretKey(key) || isSecretKey(lenientDecode(key)))) {
        sb.append(key).append('=').append(MASK);
      } else {
        sb.append(token);
      }
    }
    return sb.toString();
  }

  /** {@code {key=value, password=***}}, sorted by key, secrets masked. */
  static String maskProperties(Properties props) {
    if (props == null) {
      return "{}";
    }
    Map<String, String> m = new TreeMap<>();
    for (String k : props.stringPropertyNames()) {
      m.put(k, props.getProperty(k));
    }
    return maskMap(m);
  }

  /** Same rendering for a plain map of settings. */
  static String maskMap(Map<String, String> map) {
    StringBuilder sb = new StringBuilder("{");
    for (Map.Entry<String, String> e : new TreeMap<>(map).entrySet()) {
      if (sb.length() > 1) {
        sb.append(", ");
      }
      sb.append(e.getKey()).append('=').append(mask(e.getKey(), e.getValue()));
    }
    return sb.append('}').toString();
  }

  /** The value itself, or {@code ***} when the key is secret and the value set. */
  static String mask(String key, String value) {
    return value != null && isSecretKey(key) ? MASK : value;
  }

  private static String maskUserInfo(String head) {
    int slashes = head.indexOf("//");
    if (slashes < 0) {
      return head;
    }
    int start = slashes + 2;
    // The last '@' before the query, not the first '/' after "//": a password may hold a '/'.
    int at = head.lastIndexOf('@');
    if (at < start) {
      return head;
    }
    int colon = head.indexOf(':', start);
    if (colon < 0 || colon > at) {
      return head;
    }
    return head.substring(0, colon + 1) + MASK + head.substring(at);
  }

  private static String lenientDecode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }
}
