package dev.omnium.jdbc;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Collection;
import java.util.Map;

/**
 * The smallest JSON writer that serves {@code check --json}: maps (objects, in insertion order),
 * collections (arrays), strings, numbers, booleans and null. No dependency.
 */
final class HealthJson {

  private HealthJson() {
  }

  static String write(Object value) {
    StringBuilder sb = new StringBuilder();
    write(value, sb, 0);
    return sb.append('\n').toString();
  }

  private static void write(Object v, StringBuilder sb, int depth) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String) {
      string((String) v, sb);
    } else if (v instanceof Boolean) {
      sb.append(v.toString());
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        sb.append("null"); // JSON has no NaN or infinity: unknown
      } else {
        sb.append(BigDecimal.valueOf(d).setScale(3, RoundingMode.HALF_UP).stripTrailingZeros()
            .toPlainString());
      }
    } else if (v instanceof Number) {
      sb.append(((Number) v).longValue());
    } else if (v instanceof Map) {
      Map<?, ?> m = (Map<?, ?>) v;
      if (m.isEmpty()) {
        sb.append("{}");
        return;
      }
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        sb.append(first ? "\n" : ",\n");
        first = false;
        indent(sb, depth + 1);
        string(String.valueOf(e.getKey()), sb);
        sb.append(": ");
        write(e.getValue(), sb, depth + 1);
      }
      sb.append('\n');
      indent(sb, depth);
      sb.append('}');
    } else if (v instanceof Collection) {
      Collection<?> c = (Collection<?>) v;
      if (c.isEmpty()) {
        sb.append("[]");
        return;
      }
      sb.append('[');
      boolean first = true;
      for (Object o : c) {
        sb.append(first ? "\n" : ",\n");
        first = false;
        indent(sb, depth + 1);
        write(o, sb, depth + 1);
      }
      sb.append('\n');
      indent(sb, depth);
      sb.append(']');
    } else {
      string(v.toString(), sb);
    }
  }

  private static void indent(StringBuilder sb, int depth) {
    for (int i = 0; i < depth; i++) {
      sb.append("  ");
    }
  }

  static void string(String s, StringBuilder sb) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          sb.append("\\\"");
          break;
        case '\\':
          sb.append("\\\\");
          break;
        case '\n':
          sb.append("\\n");
          break;
        case '\r':
          sb.append("\\r");
          break;
        case '\t':
          sb.append("\\t");
          break;
        default:
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    sb.append('"');
  }
}
