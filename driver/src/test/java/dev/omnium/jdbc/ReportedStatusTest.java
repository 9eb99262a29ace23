package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.core.QueryExecutorBase;

/**
 * {@link ReportedStatus} reads the entries of pgjdbc's map of reported settings live. The stub
 * keeps them as pgjdbc does (a case-insensitive TreeMap behind a read-only view).
 */
class ReportedStatusTest {
  private final TreeMap<String, String> map = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
  private final PGConnection pg = (PGConnection) Proxy.newProxyInstance(
      getClass().getClassLoader(), new Class<?>[] {PGConnection.class}, (p, m, a) -> {
        switch (m.getName()) {
          case "getParameterStatuses":
            return Collections.unmodifiableMap(map);
          case "getParameterStatus":
            return map.get((String) a[0]);
          default:
            throw new UnsupportedOperationException(m.getName());
        }
      });

  private static int index(String key) {
    for (int i = 0; i < Binding.REPORTED.length; i++) {
      if (Binding.REPORTED[i].equals(key)) return i;
    }
    throw new IllegalArgumentException(key);
  }

  @Test
  void aValueTheServerReportsAgainIsReadWithoutALookUp() {
    map.put("TimeZone", "UTC");
    map.put("in_hot_standby", "on");
    map.put("application_name", "api:replica");
    ReportedStatus st = ReportedStatus.of(pg);
    map.put("TimeZone", "Pacific/Chatham"); // as pgjdbc's onParameterStatus
    map.put("in_hot_standby", "off");
    assertEquals("Pacific/Chatham", st.reported(index("TimeZone")));
    assertEquals("off", st.inHotStandby());
    assertEquals("api:replica", st.reported(index("application_name")));
    assertNull(st.reported(index("search_path")));
  }

  @Test
  void aChangeOfAnyReportedSettingIsSeen() {
    for (String key : Binding.REPORTED) map.put(key, "v");
    map.put("in_hot_standby", "on");
    ReportedStatus st = ReportedStatus.of(pg);
    String[] at = new String[Binding.REPORTED.length];
    for (int i = 0; i < at.length; i++) at[i] = map.get(Binding.REPORTED[i]);
    assertFalse(st.differsFrom(at));
    for (String key : Binding.REPORTED) {
      map.put(key, new String("v")); // reported again, same value: no change
      assertFalse(st.differsFrom(at), key);
      map.put(key, "w");
      assertTrue(st.differsFrom(at), key);
      map.put(key, "v");
    }
    map.put("some_new_setting", "x"); // the map grew: look-ups from now on
    map.put("TimeZone", "w");
    assertTrue(st.differsFrom(at));
  }

  @Test
  void aKeyReportedOnlyLaterIsFoundByLookUp() {
    map.put("TimeZone", "UTC");
    ReportedStatus st = ReportedStatus.of(pg);
    assertNull(st.inHotStandby());
    map.put("search_path", "other");
    map.put("in_hot_standby", "off");
    assertEquals("other", st.reported(index("search_path")));
    assertEquals("off", st.inHotStandby());
    map.put("TimeZone", "Europe/Paris");
    assertEquals("Europe/Paris", st.reported(index("TimeZone")));
  }

  @Test
  void noReadableSessionNoStatus() {
    assertNull(ReportedStatus.of(null));
    PGConnection broken = (PGConnection) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {PGConnection.class}, (p, m, a) -> {
          throw new IllegalStateException("closed");
        });
    assertNull(ReportedStatus.of(broken));
  }

  /** Fails when pgjdbc stops keeping the reported settings in a TreeMap (entries stay live). */
  @Test
  void pgjdbcStillKeepsReportedSettingsInATreeMap() throws Exception {
    Field f = QueryExecutorBase.class.getDeclaredField("parameterStatuses");
    assertEquals(TreeMap.class, f.getType());
    assertEquals(Map.class, QueryExecutorBase.class.getMethod("getParameterStatuses")
        .getReturnType());
  }
}
