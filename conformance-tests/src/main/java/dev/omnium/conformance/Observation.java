package dev.omnium.conformance;

import java.util.ArrayList;
import java.util.List;

/**
 * What one run of one scenario saw, in order: what the application saw ({@link Kind#APP}), what
 * the servers saw ({@link Kind#SERVER}) and where a statement ran ({@link Kind#WHERE}, the only
 * entries where a read may legitimately differ). Serializes to one line per entry, so that a
 * forked JVM can report it on stdout.
 */
public final class Observation {
  /** What an entry is about; decides which comparison rule applies. */
  public enum Kind { APP, SERVER, WHERE }

  /** One observed fact. */
  public record Entry(Kind kind, String key, String value) {
    @Override
    public String toString() {
      return kind + " " + key + " = " + value;
    }
  }

  private final List<Entry> entries = new ArrayList<>();

  void add(Kind kind, String key, String value) {
    entries.add(new Entry(kind, key, value));
  }

  /** @return the entries in the order they were observed */
  public List<Entry> entries() {
    return entries;
  }

  /** @return one line per entry: kind, key and value separated by tabs, escaped */
  public List<String> serialize() {
    List<String> lines = new ArrayList<>();
    for (Entry e : entries) {
      lines.add(e.kind() + "\t" + escape(e.key()) + "\t" + escape(e.value()));
    }
    return lines;
  }

  /** @return the observation {@link #serialize()} wrote */
  public static Observation parse(List<String> lines) {
    Observation o = new Observation();
    for (String l : lines) {
      String[] p = l.split("\t", -1);
      if (p.length != 3) {
        throw new IllegalArgumentException("not an observation line: " + l);
      }
      o.add(Kind.valueOf(p[0]), unescape(p[1]), unescape(p[2]));
    }
    return o;
  }

  static String escape(String s) {
    if (s == null) {
      return "\\0";
    }
    StringBuilder b = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      switch (c) {
        case '\\' -> b.append("\\\\");
        case '\t' -> b.append("\\t");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        default -> b.append(c);
      }
    }
    return b.toString();
  }

  static String unescape(String s) {
    if (s.equals("\\0")) {
      return null;
    }
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        char n = s.charAt(++i);
        b.append(n == 't' ? '\t' : n == 'n' ? '\n' : n == 'r' ? '\r' : n);
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
