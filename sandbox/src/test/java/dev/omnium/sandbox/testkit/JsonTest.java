package dev.omnium.sandbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
  @Test
  void readsEveryKindOfValueInDocumentOrder() {
    Object v = Json.parse(" {\"b\": [1, -2.5e1, \"x\\n\\u0041\"], \"a\": {\"t\": true, "
        + "\"f\": false, \"n\": null}} ");
    Map<?, ?> root = (Map<?, ?>) v;
    assertEquals(List.of("b", "a"), List.copyOf(root.keySet()));
    assertEquals(List.of(1.0, -25.0, "x\nA"), root.get("b"));
    Map<?, ?> a = (Map<?, ?>) root.get("a");
    assertEquals(Boolean.TRUE, a.get("t"));
    assertEquals(Boolean.FALSE, a.get("f"));
    assertTrue(a.containsKey("n"));
    assertNull(a.get("n"));
    assertEquals(List.of(), Json.parse("[]"));
    assertEquals(Map.of(), Json.parse("{}"));
  }

  @Test
  void rejectsWhatALenientReaderWouldAccept() {
    for (String bad : List.of("{\"a\": 1, \"a\": 2}", "[1] x", "[01]", "[1.]", "{'a': 1}",
        "[\"\\q\"]", "[\"a\nb\"]", "[1,]", "", "{\"a\" 1}", "tru")) {
      assertThrows(IllegalArgumentException.class, () -> Json.parse(bad), bad);
    }
  }
}
