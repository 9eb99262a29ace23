package dev.omnium.jdbc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A route's settings as a session sets them itself, once when it opens, where the pooler in front
 * is proven to pin a server session to each client and reset it when the client leaves
 * ({@link SessionPinning}, {@link StartupSettings}). Unlike the startup packet's, a RESET takes
 * them back to the server's defaults: what follows a reset sets them again. Immutable: a session
 * keeps the one it opened with.
 */
final class PinnedSettings {
  /** {@code SET name = value; SET ...}: what a session sets when it opens and after a reset. */
  final String set;
  /** What keeps a read route's timeouts at most its own after the user's ({@link SqlSettings}). */
  final String timeoutCaps;
  private final Map<String, String> values;

  /** @param values name to value, as the startup packet's {@code -c} options would set them */
  PinnedSettings(Map<String, String> values) {
    this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    StringBuilder s = new StringBuilder();
    for (Map.Entry<String, String> e : values.entrySet()) {
      s.append(s.length() == 0 ? "" : "; ").append("SET ").append(e.getKey()).append(" = ")
          .append(TransactionSettings.value(e.getValue()));
    }
    set = s.toString();
    StringBuilder caps = new StringBuilder();
    for (String name : SqlSettings.CAPPED) {
      String v = values.get(name);
      if (v == null) continue;
      caps.append(caps.length() == 0 ? "" : ", ").append("('").append(name).append("', ")
          .append(Long.parseLong(v)).append(')');
    }
    timeoutCaps = caps.length() == 0 ? "" : SqlSettings.timeoutCaps("(VALUES " + caps
        + ") r(name, v) JOIN pg_settings s USING (name)", "r.v");
  }

  /**
   * What sets again the settings that {@code changes} (the user's SQL, in order) left reset: a
   * RESET goes back to the server's defaults here, not to the values the startup packet gives
   * elsewhere. A setting the user set after its reset stays theirs. Empty when none.
   */
  String restoring(List<SqlSetting> changes) {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, String> e : values.entrySet()) {
      String name = e.getKey();
      boolean reset = false;
      for (SqlSetting c : changes) {
        if (c.action() == SqlSetting.RESET_ALL || c.action() == SqlSetting.DISCARD_ALL) {
          reset = true;
        } else if (name.equalsIgnoreCase(c.key())) {
          reset = c.action() == SqlSetting.RESET;
        }
      }
      if (reset) {
        b.append(b.length() == 0 ? "" : "; ").append("SET ").append(name).append(" = ")
            .append(TransactionSettings.value(e.getValue()));
      }
    }
    return b.toString();
  }
}
