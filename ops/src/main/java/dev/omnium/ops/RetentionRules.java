package dev.omnium.ops;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a rules file: one rule per line, {@code TABLE month COLUMN KEEP} or
 * {@code TABLE delete COLUMN KEEP [where SQL]}, KEEP as a number of days ({@code 30d}); blank
 * lines and everything after {@code #} are ignored (outside the where condition's quotes). A bad
 * line is an {@link IllegalArgumentException} whose message starts with {@code FILE:LINE:}.
 */
public final class RetentionRules {
  private static final Pattern KEEP = Pattern.compile("([0-9]{1,6})d");
  private static final Pattern WHERE = Pattern.compile("(?i)where\\b");

  private RetentionRules() {
  }

  /**
   * @param file the rules file (UTF-8)
   * @return its rules, in order
   * @throws IOException when it cannot be read
   * @throws IllegalArgumentException on a bad line, naming the file and line
   */
  public static List<RetentionRule> read(Path file) throws IOException {
    return parse(file.toString(), Files.readString(file, StandardCharsets.UTF_8));
  }

  /**
   * @param source what to call the text in errors (a file name)
   * @param text the rules
   * @return the rules, in order
   * @throws IllegalArgumentException on a bad line, naming {@code source} and the line
   */
  public static List<RetentionRule> parse(String source, String text) {
    List<RetentionRule> rules = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String where = source + ":" + (i + 1);
      String line = stripComment(lines[i]).trim();
      if (line.isEmpty()) {
        continue;
      }
      RetentionRule rule;
      try {
        rule = parseLine(line, where);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage() + " (line: " + line
            + ")", e);
      }
      if (rule.kind() == RetentionRule.Kind.MONTH && !seen.add(rule.table())) {
        throw new IllegalArgumentException(where + ": " + rule.table()
            + " has a month rule already; a table is kept by one month rule");
      }
      rules.add(rule);
    }
    return List.copyOf(rules);
  }

  private static RetentionRule parseLine(String line, String where) {
    String[] head = line.split("\\s+", 5);
    if (head.length < 4) {
      throw new IllegalArgumentException("expected TABLE month COLUMN KEEP or TABLE delete COLUMN"
          + " KEEP [where SQL]");
    }
    RetentionRule.Kind kind;
    switch (head[1].toLowerCase(Locale.ROOT)) {
      case "month":
        kind = RetentionRule.Kind.MONTH;
        break;
      case "delete":
        kind = RetentionRule.Kind.DELETE;
        break;
      default:
        throw new IllegalArgumentException("unknown kind '" + head[1] + "': month or delete");
    }
    Matcher keep = KEEP.matcher(head[3]);
    if (!keep.matches()) {
      throw new IllegalArgumentException("bad keep '" + head[3] + "': days, like 30d");
    }
    String condition = null;
    if (head.length == 5) {
      String rest = head[4].trim();
      Matcher w = WHERE.matcher(rest);
      if (kind == RetentionRule.Kind.MONTH) {
        throw new IllegalArgumentException("unexpected '" + rest + "' after KEEP: a month rule"
            + " ends there");
      }
      if (!w.lookingAt()) {
        throw new IllegalArgumentException("unexpected '" + rest + "' after KEEP: only"
            + " 'where SQL' may follow");
      }
      condition = rest.substring(w.end());
    }
    return RetentionRule.of(head[0], kind, head[2], Integer.parseInt(keep.group(1)), condition,
        where);
  }

  /** Drops a {@code #} comment, but not a {@code #} inside quotes (of a where condition). */
  static String stripComment(String line) {
    boolean single = false;
    boolean dbl = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '\'' && !dbl) {
        single = !single;
      } else if (c == '"' && !single) {
        dbl = !dbl;
      } else if (c == '#' && !single && !dbl) {
        return line.substring(0, i);
      }
    }
    return line;
  }
}
