package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The README's key table is {@link OmniumProperty}: every key, in order, with its default. */
class ReadmeKeysTest {
  private static final Path README = Path.of("..", "README.md");
  private static final String SECTION = "## The URL and its keys";
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| ([^|]+) \\|");

  /** The rows of the table, as "key default" ("none" where the key has no default). */
  static List<String> readmeRows(String readme) {
    int start = readme.indexOf(SECTION);
    assertFalse(start < 0, "README.md has no section '" + SECTION + "'");
    int end = readme.indexOf("\n## ", start + SECTION.length());
    String section = end < 0 ? readme.substring(start) : readme.substring(start, end);
    List<String> rows = new ArrayList<>();
    for (String line : section.split("\n")) {
      Matcher m = ROW.matcher(line);
      if (m.find()) {
        String def = m.group(2).strip();
        boolean none = def.equals("none") || def.equals("unset");
        rows.add(m.group(1) + " " + (none ? "none" : def.replace("`", "")));
      }
    }
    return rows;
  }

  static List<String> enumRows() {
    List<String> rows = new ArrayList<>();
    for (OmniumProperty p : OmniumProperty.values()) {
      rows.add(p.getName() + " " + (p.getDefaultValue() == null ? "none" : p.getDefaultValue()));
    }
    return rows;
  }

  @Test
  void theReadmeKeyTableListsEveryKeyInOrderWithItsDefault() throws IOException {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    List<String> expected = enumRows();
    List<String> actual = readmeRows(readme);
    StringBuilder rows = new StringBuilder();
    for (OmniumProperty p : OmniumProperty.values()) {
      rows.append("| `").append(p.getName()).append("` | ")
          .append(p.getDefaultValue() == null ? "none" : "`" + p.getDefaultValue() + "`")
          .append(" | ").append(p.getDescription()).append(" |\n");
    }
    assertEquals(expected, actual, "README.md's key table differs from OmniumProperty; rows as"
        + " the enum has them (keep the README's wording where it has one):\n" + rows);
  }

  @Test
  void theCheckReadsTheRowsItIsGiven() {
    String table = SECTION + "\n\n| key | default | meaning |\n|---|---|---|\n"
        + "| `maxAge` | `5s` | x |\n| `lockTimeout` | unset | y |\n\n## Next\n| `other` | `1` |"
        + " z |\n";
    assertEquals(List.of("maxAge 5s", "lockTimeout none"), readmeRows(table));
  }
}
