package dev.omnium.sandbox.testkit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict recursive-descent JSON reader (RFC 8259: objects, arrays, strings, numbers as
 * {@code Double}, literals), for tests that check what omnium prints as JSON and for tools that
 * read JSON reports; it rejects what a lenient reader would let through (trailing text, repeated
 * keys, bad escapes), so that a malformed document fails the test that reads it.
 */
public final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  /**
   * Parses one JSON document.
   *
   * @param text the document
   * @return a {@code Map<String, Object>} (in document order), {@code List<Object>},
   *     {@code String}, {@code Double}, {@code Boolean} or null
   * @throws IllegalArgumentException when {@code text} is not exactly one JSON value, or an
   *     object repeats a key
   */
  public static Object parse(String text) {
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
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        throw error("unexpected '" + c + "'");
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    members('}', () -> {
      ws();
      if (peek() != '"') throw error("expected a key");
      String k = string();
      ws();
      expect(':');
      if (m.put(k, value()) != null) throw error("duplicate key " + k);
    });
    return m;
  }

  private List<Object> array() {
    List<Object> l = new ArrayList<>();
    i++;
    members(']', () -> l.add(value()));
    return l;
  }

  /** Reads comma-separated members up to {@code close}; the opening bracket is consumed. */
  private void members(char close, Runnable member) {
    ws();
    if (peek() == close) {
      i++;
      return;
    }
    while (true) {
      member.run();
      ws();
      char c = next();
      if (c == close) return;
      if (c != ',') throw error("expected , or " + close);
    }
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    while (true) {
      char c = next();
      if (c == '"') return b.toString();
      if (c < 0x20) throw error("control character in string");
      if (c != '\\') {
        b.append(c);
        continue;
      }
      char e = next();
      switch (e) {
        case '"': case '\\': case '/': b.append(e); break;
        case 'b': b.append('\b'); break;
        case 'f': b.append('\f'); break;
        case 'n': b.append('\n'); break;
        case 'r': b.append('\r'); break;
        case 't': b.append('\t'); break;
        case 'u':
          if (i + 4 > s.length()) throw error("short \\u escape");
          b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
          break;
        default: throw error("bad escape \\" + e);
      }
    }
  }

  private Double number() {
    int start = i;
    if (peek() == '-') i++;
    if (peek() == '0') {
      i++;
    } else if (Character.isDigit(peek())) {
      while (Character.isDigit(peek())) i++;
    } else {
      throw error("bad number");
    }
    if (peek() == '.') {
      i++;
      if (!Character.isDigit(peek())) throw error("bad fraction");
      while (Character.isDigit(peek())) i++;
    }
    if (peek() == 'e' || peek() == 'E') {
      i++;
      if (peek() == '+' || peek() == '-') i++;
      if (!Character.isDigit(peek())) throw error("bad exponent");
      while (Character.isDigit(peek())) i++;
    }
    return Double.valueOf(s.substring(start, i));
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, i)) throw error("expected " + word);
    i += word.length();
    return v;
  }

  private void ws() {
    while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
  }

  private char peek() {
    return i < s.length() ? s.charAt(i) : '\0';
  }

  private char next() {
    if (i >= s.length()) throw error("unexpected end");
    return s.charAt(i++);
  }

  private void expect(char c) {
    if (next() != c) throw error("expected " + c);
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("invalid JSON at " + i + ": " + what + "\n" + s);
  }
}
