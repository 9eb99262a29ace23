package dev.omnium.jdbc;

import java.util.Map;
import org.postgresql.PGConnection;

/**
 * The settings a pgjdbc session's server reported ({@link Binding#REPORTED} and
 * {@code in_hot_standby}), read without a map look-up. pgjdbc keeps them in a case-insensitive
 * TreeMap that it only ever puts into, and a put on a present key replaces the value in that
 * key's entry: the entries taken once stay live. A key absent then is still absent while the map
 * has not grown; once it has, that key is looked up, as without this class. Read on a replica
 * session at every borrow, answer and return (a look-up costs a few case-insensitive string
 * comparisons each).
 */
final class ReportedStatus {
  private static final String IN_HOT_STANDBY = "in_hot_standby";

  private final PGConnection pg;
  /** pgjdbc's live, read-only view of the map. */
  private final Map<String, String> all;
  /** The map's size when the entries were taken. */
  private final int size;
  /** The entry of each {@link Binding#REPORTED} key, null where the key was absent. */
  private final Map.Entry<?, ?>[] entries;
  private final Map.Entry<?, ?> inHotStandby;

  private ReportedStatus(PGConnection pg, Map<String, String> all) {
    this.pg = pg;
    this.all = all;
    this.entries = new Map.Entry<?, ?>[Binding.REPORTED.length];
    Map.Entry<?, ?> hotStandby = null;
    int n = 0;
    for (Map.Entry<String, String> e : all.entrySet()) {
      n++;
      String key = e.getKey();
      if (IN_HOT_STANDBY.equalsIgnoreCase(key)) hotStandby = e;
      for (int i = 0; i < entries.length; i++) {
        if (Binding.REPORTED[i].equalsIgnoreCase(key)) entries[i] = e;
      }
    }
    this.inHotStandby = hotStandby;
    this.size = n;
  }

  /** The live settings of {@code pg}, or null when it cannot be read (not pgjdbc's, closed). */
  static ReportedStatus of(PGConnection pg) {
    if (pg == null) return null;
    try {
      Map<String, String> all = pg.getParameterStatuses();
      return all == null ? null : new ReportedStatus(pg, all);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** The current value of {@code Binding.REPORTED[i]}, as pgjdbc's getParameterStatus. */
  String reported(int i) {
    return value(entries[i], Binding.REPORTED[i]);
  }

  private String value(Map.Entry<?, ?> e, String key) {
    if (e != null) return (String) e.getValue(); // live: no size check needed
    return all.size() == size ? null : pg.getParameterStatus(key);
  }

  /** Whether any {@link Binding#REPORTED} value now differs from {@code at} (same order). */
  boolean differsFrom(String[] at) {
    for (int i = 0; i < at.length; i++) {
      String now = value(entries[i], Binding.REPORTED[i]);
      if (now != at[i] && (now == null || !now.equals(at[i]))) return true;
    }
    return false;
  }

  /** The current value of {@code in_hot_standby}, as pgjdbc's getParameterStatus. */
  String inHotStandby() {
    return value(inHotStandby, IN_HOT_STANDBY);
  }
}
