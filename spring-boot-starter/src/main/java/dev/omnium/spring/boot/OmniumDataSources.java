package dev.omnium.spring.boot;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;

/**
 * The application's DataSources that route through omnium, with the name of the router each one
 * uses (its {@code applicationName}), as the post-processor found them.
 */
public final class OmniumDataSources {
  /**
   * One omnium DataSource.
   *
   * @param beanName the bean's name
   * @param dataSource the DataSource (Boot's HikariCP pool)
   * @param applicationName the router's name: its JMX bean is
   *     {@code dev.omnium:type=Router,name=<applicationName>}
   */
  public record Entry(String beanName, DataSource dataSource, String applicationName) { }

  private final List<Entry> entries = new CopyOnWriteArrayList<>();

  void add(String beanName, DataSource dataSource, String applicationName) {
    entries.add(new Entry(beanName, dataSource, applicationName));
  }

  /**
   * The DataSources found so far.
   *
   * @return an unmodifiable snapshot
   */
  public List<Entry> entries() {
    return List.copyOf(entries);
  }

  /** The router name of a URL and its properties: URL first, then properties, then the default. */
  static String applicationName(String url, Properties props) {
    Map<String, String> urlParameters = parameters(url);
    for (String key : new String[] {"applicationName", "ApplicationName"}) {
      String v = urlParameters.get(key);
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    for (String key : new String[] {"applicationName", "ApplicationName"}) {
      String v = props.getProperty(key);
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    return "omnium";
  }

  /** The query parameters of a JDBC URL, decoded. */
  static Map<String, String> parameters(String url) {
    Map<String, String> out = new HashMap<>();
    int q = url.indexOf('?');
    if (q < 0) {
      return out;
    }
    for (String pair : url.substring(q + 1).split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }
}
