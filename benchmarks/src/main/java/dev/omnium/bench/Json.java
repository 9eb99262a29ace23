package dev.omnium.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A minimal JSON reader for JMH's result files: objects, arrays, strings, numbers, true/false/null. */
final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  static Object parse(String text) {
    Json j = new Json(text);
    Object v = j.value();
    j.ws();
    if (j.i != j.s.length()) throw j.error("trailing text");
    return v;
  }

  private Object value() {
    ws();
    if (i >= s.length()) throw error("unexpected end");
    char c = s.charAt(i);
    switch (c) {
      case '{': return object();
      case '[': return array();
      case '"': return string();
      case 't': return literal("true", Boolean.TRUE);
      case 'f': return literal("false", Boolean.FALSE);
      case 'n': return literal("null", null);
      default: return number();
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    ws();
    if (s.charAt(i) == '}') {
      i++;
      return m;
    }
    while (true) {
      ws();
      String key = string();
      ws();
      expect(':');
      m.put(key, value());
      ws();
      char c = s.charAt(i++);
      if (c == '}') return m;
      if (c != ',') throw error("expected , or }");
    }
  }

  private List<Object> array() {
    List<Object> l = new ArrayList<>();
    i++;
    ws();
    if (s.charAt(i) == ']') {
      i++;
      return l;
    }
    while (true) {
      l.add(value());
      ws();
      char c = s.charAt(i++);
      if (c == ']') return l;
      if (c != ',') throw error("expected , or ]");
    }
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    while (true) {
      char c = s.charAt(i++);
      if (c == '"') return b.toString();
      if (c == '\\') {
        char e = s.charAt(i++);
        switch (e) {
          case 'n': b.append('\n'); break;
          case 't': b.append('\t'); break;
          case 'r': b.append('\r'); break;
          case 'b': b.append('\b'); break;
          case 'f': b.append('\f'); break;
          case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
          default: b.append(e);
        }
      } else {
        b.append(c);
      }
    }
  }

  private Object number() {
    int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
    if (start == i) throw error("unexpected character '" + s.charAt(i) + "'");
    return Double.parseDouble(s.substring(start, i));
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, i)) throw error("expected " + word);
    i += word.length();
    return v;
  }

  private void expect(char c) {
    if (s.charAt(i) != c) throw error("expected " + c);
    i++;
  }

  private void ws() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("JSON: " + what + " at offset " + i);
  }

  /** A number that JMH may have written as a string ("NaN") or a JSON number. */
  static double num(Object o) {
    if (o instanceof Number) return ((Number) o).doubleValue();
    if (o instanceof String) {
      try {
        return Double.parseDouble((String) o);
      } catch (NumberFormatException e) {
        return Double.NaN;
      }
    }
    return Double.NaN;
  }
}
