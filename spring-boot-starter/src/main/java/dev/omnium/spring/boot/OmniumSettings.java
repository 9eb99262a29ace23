package dev.omnium.spring.boot;

import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The {@code omnium.*} properties of the environment, in any relaxed spelling
 * ({@code omnium.max-age}, {@code omnium.maxAge}, {@code OMNIUM_MAXAGE}), as driver keys.
 */
final class OmniumSettings {
  private static final Log log = LogFactory.getLog(OmniumSettings.class);

  private OmniumSettings() { }

  /**
   * The driver keys set under {@code omnium.*}. An unknown single-level key (a typo such as
   * {@code omnium.max-agee}) is logged once with the known ones; deeper names
   * ({@code omnium.pg.version}) belong to other tools and are left alone.
   */
  static Properties from(Environment environment) {
    Map<String, String> bound = Binder.get(environment)
        .bind(OmniumKeys.PREFIX, Bindable.mapOf(String.class, String.class))
        .orElse(Map.of());
    Properties keys = new Properties();
    for (Map.Entry<String, String> e : new TreeMap<>(bound).entrySet()) {
      String key = OmniumKeys.keyFor(e.getKey());
      if (key == null) {
        if (!e.getKey().contains(".")) {
          log.warn("omnium: unknown property " + OmniumKeys.PREFIX + "." + e.getKey()
              + " is ignored; known: " + known());
        }
        continue;
      }
      if (e.getValue() != null) {
        keys.setProperty(key, e.getValue());
      }
    }
    return keys;
  }

  private static String known() {
    StringBuilder sb = new StringBuilder();
    OmniumKeys.all().forEach(k -> sb.append(sb.length() == 0 ? "" : ", ")
        .append(OmniumKeys.PREFIX).append('.').append(OmniumKeys.kebab(k.name)));
    return sb.toString();
  }
}
