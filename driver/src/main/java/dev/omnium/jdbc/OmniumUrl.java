package dev.omnium.jdbc;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The syntax of {@code jdbc:omnium:postgresql:} URLs, nothing more (what the keys mean is
 * {@link OmniumConfig}'s job). Follows pgjdbc's {@code Driver.parseURL}: the short form
 * {@code jdbc:omnium:postgresql:db} means localhost:5432, {@code ///db} too, a host without a
 * port gets 5432, the database and the query are decoded like {@link URLDecoder} (so '+' is a
 * space, as in pgjdbc), and a repeated key keeps its last value.
 */
final class OmniumUrl {

  static final String PREFIX = "jdbc:omnium:postgresql:";
  static final String FORM =
      "jdbc:omnium:postgresql://host[:port][,host[:port]...]/database[?key=value&...]";

  private static final HostSpec LOCALHOST = new HostSpec("localhost", HostSpec.DEFAULT_PORT);

  private final List<HostSpec> hosts;
  private final String database;
  private final Map<String, String> parameters;

  private OmniumUrl(List<HostSpec> hosts, String database, Map<String, String> parameters) {
    this.hosts = hosts;
    this.database = database;
    this.parameters = parameters;
  }

  /** True for URLs this driver owns; the driver returns null for all others, as JDBC asks. */
  static boolean accepts(String url) {
    return url != null && url.startsWith(PREFIX);
  }

  static OmniumUrl parse(String url) throws SQLException {
    if (!accepts(url)) {
      throw error("Not an omnium URL: " + Secrets.maskUrl(url) + " (expected " + FORM + ")");
    }
    int q = url.indexOf('?');
    String server = url.substring(PREFIX.length(), q < 0 ? url.length() : q);
    String query = q < 0 ? "" : url.substring(q + 1);

    List<HostSpec> hosts;
    String rawDatabase;
    if (server.startsWith("//")) {
      String rest = server.substring(2);
      int slash = rest.indexOf('/');
      String hostPart = slash < 0 ? rest : rest.substring(0, slash);
      rawDatabase = slash < 0 ? "" : rest.substring(slash + 1);
      if (hostPart.indexOf('@') >= 0) {
        // pgjdbc has no user info either; refusing it keeps the password out of host errors.
        throw error("User info (user:password@host) is not supported in " + Secrets.maskUrl(url)
            + ": use the user and password parameters (expected " + FORM + ")");
      }
      hosts = parseHosts(url, hostPart);
    } else if (server.startsWith("/")) {
      if (server.length() > 1) {
        throw error("Malformed URL " + Secrets.maskUrl(url) + " (expected " + FORM
            + " or jdbc:omnium:postgresql:database)");
      }
      rawDatabase = "";
      hosts = List.of(LOCALHOST);
    } else {
      rawDatabase = server;
      hosts = List.of(LOCALHOST);
    }

    if (rawDatabase.indexOf('/') >= 0) {
      throw error("Malformed database name in " + Secrets.maskUrl(url)
          + " (a '/' in the database name must be written %2F; expected " + FORM + ")");
    }
    String database = decode(rawDatabase, "database name", url);
    if (database.isEmpty()) {
      throw error("The database is missing in " + Secrets.maskUrl(url) + " (expected " + FORM
          + ")");
    }
    return new OmniumUrl(hosts, database, parseQuery(url, query));
  }

  /** Primary hosts, in URL order (pgjdbc tries them in this order). */
  List<HostSpec> hosts() {
    return hosts;
  }

  /** The database name, decoded. */
  String database() {
    return database;
  }

  /** Query parameters, decoded, in first-seen order; unmodifiable. */
  Map<String, String> parameters() {
    return parameters;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(PREFIX).append("//");
    for (int i = 0; i < hosts.size(); i++) {
      sb.append(i == 0 ? "" : ",").append(hosts.get(i));
    }
    sb.append('/').append(database);
    char sep = '?';
    for (Map.Entry<String, String> e : parameters.entrySet()) {
      sb.append(sep).append(e.getKey()).append('=').append(Secrets.mask(e.getKey(), e.getValue()));
      sep = '&';
    }
    return sb.toString();
  }

  private static List<HostSpec> parseHosts(String url, String hostPart) throws SQLException {
    if (hostPart.isEmpty()) {
      return List.of(LOCALHOST); // jdbc:postgresql:///db, as pgjdbc
    }
    StringBuilder normalized = new StringBuilder();
    for (String entry : hostPart.split(",", -1)) {
      // ":5433" means localhost:5433 in pgjdbc.
      String e = entry.startsWith(":") ? "localhost" + entry : entry;
      normalized.append(normalized.length() == 0 ? "" : ",").append(e);
    }
    try {
      return HostSpec.parseList("host", normalized.toString());
    } catch (SQLException e) {
      throw error(e.getMessage() + " in " + Secrets.maskUrl(url) + " (expected " + FORM + ")");
    }
  }

  private static Map<String, String> parseQuery(String url, String query) throws SQLException {
    Map<String, String> params = new LinkedHashMap<>();
    for (String token : query.split("&")) {
      if (token.isEmpty()) {
        continue; // "a=1&&b=2" and a trailing '&' are harmless, as in pgjdbc
      }
      int eq = token.indexOf('=');
      String key = decode(eq < 0 ? token : token.substring(0, eq), "parameter name", url);
      if (key.isEmpty()) {
        throw error("Empty parameter name in " + Secrets.maskUrl(url) + " (expected " + FORM + ")");
      }
      String value = eq < 0 ? "" : decodeValue(key, token.substring(eq + 1));
      params.put(key, value);
    }
    return Collections.unmodifiableMap(params);
  }

  private static String decodeValue(String key, String raw) throws SQLException {
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      // Never echo the value: it may be the password.
      throw error("Invalid percent-encoding in the value of URL parameter " + key
          + " (write a literal % as %25)");
    }
  }

  private static String decode(String raw, String what, String url) throws SQLException {
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw error("Invalid percent-encoding in the " + what + " of " + Secrets.maskUrl(url)
          + " (write a literal % as %25)");
    }
  }

  private static SQLException error(String message) {
    return new SQLNonTransientConnectionException(message, "08001");
  }
}
