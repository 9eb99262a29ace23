package dev.omnium.spring.boot;

import dev.omnium.jdbc.OmniumDriver;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.postgresql.Driver;

/**
 * The omnium keys (the driver's key table, read through {@code Driver.getPropertyInfo}) and their
 * {@code omnium.*} property names: {@code maxAge} is {@code omnium.max-age}.
 */
final class OmniumKeys {
  /**
   * A URL without a database: the driver then lists its own keys with their defaults as written
   * in the key table ({@code 5s}), as it does for tools while a URL is being typed.
   */
  private static final String PROBE_URL = "jdbc:omnium:postgresql://";
  static final String PREFIX = "omnium";

  private static final List<DriverPropertyInfo> KEYS = load();

  private OmniumKeys() { }

  /** Every omnium key, in the driver's order; {@code value} holds the default (null: none). */
  static List<DriverPropertyInfo> all() {
    return KEYS;
  }

  /** {@code maxAge} → {@code max-age}. */
  static String kebab(String key) {
    StringBuilder sb = new StringBuilder();
    for (char c : key.toCharArray()) {
      if (Character.isUpperCase(c)) {
        sb.append('-').append(Character.toLowerCase(c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  /** The form relaxed binding reduces every spelling to: max-age, maxAge, MAX_AGE → maxage. */
  static String normalized(String name) {
    StringBuilder sb = new StringBuilder();
    for (char c : name.toCharArray()) {
      if (c != '-' && c != '_' && c != '.') {
        sb.append(Character.toLowerCase(c));
      }
    }
    return sb.toString().toLowerCase(Locale.ROOT);
  }

  /** The driver's key for a bound {@code omnium.*} name in any relaxed spelling, or null. */
  static String keyFor(String relaxedName) {
    String n = normalized(relaxedName);
    for (DriverPropertyInfo k : KEYS) {
      if (normalized(k.name).equals(n)) {
        return k.name;
      }
    }
    return null;
  }

  private static List<DriverPropertyInfo> load() {
    try {
      // Should the driver add pgjdbc's keys to that list, keep only those pgjdbc does not know.
      Set<String> pgjdbc = new HashSet<>();
      for (DriverPropertyInfo p : new Driver().getPropertyInfo("jdbc:postgresql://localhost/probe",
          null)) {
        pgjdbc.add(p.name);
      }
      List<DriverPropertyInfo> keys = new ArrayList<>();
      for (DriverPropertyInfo p : new OmniumDriver().getPropertyInfo(PROBE_URL, null)) {
        if (!pgjdbc.contains(p.name) && p.name != null) {
          keys.add(p);
        }
      }
      return Collections.unmodifiableList(keys);
    } catch (SQLException e) {
      throw new IllegalStateException("omnium: cannot read the driver's key table", e);
    }
  }
}
