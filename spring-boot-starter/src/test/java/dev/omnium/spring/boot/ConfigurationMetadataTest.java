package dev.omnium.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverPropertyInfo;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The committed {@code META-INF/spring-configuration-metadata.json} (IDE completion and
 * descriptions of {@code omnium.*}) is generated from the driver's key table: this test fails when
 * they differ. Regenerate with {@code -Domnium.regenerate=true}.
 */
class ConfigurationMetadataTest {
  static final Path COMMITTED =
      Path.of("src/main/resources/META-INF/spring-configuration-metadata.json");

  @Test
  void committedMetadataIsTheKeyTable() throws IOException {
    String generated = render();
    if (Boolean.getBoolean("omnium.regenerate")) {
      Files.writeString(COMMITTED, generated, StandardCharsets.UTF_8);
    }
    assertEquals(generated, Files.readString(COMMITTED, StandardCharsets.UTF_8),
        "the metadata is stale: run this test with -Domnium.regenerate=true and commit the file");
  }

  @Test
  void everyKeyHasAPropertyWithItsDescription() throws IOException {
    String committed = Files.readString(COMMITTED, StandardCharsets.UTF_8);
    assertTrue(OmniumKeys.all().size() >= 20, "the key table: " + OmniumKeys.all().size());
    for (DriverPropertyInfo k : OmniumKeys.all()) {
      String name = "\"name\": \"omnium." + OmniumKeys.kebab(k.name) + "\"";
      assertTrue(committed.contains(name), k.name);
      assertTrue(committed.contains(json(k.description)), k.name);
    }
    assertTrue(committed.contains("\"name\": \"omnium.max-age\""));
    assertTrue(committed.contains("\"defaultValue\": \"5s\""));
  }

  static String render() {
    StringBuilder sb = new StringBuilder();
    sb.append("{\n  \"groups\": [\n");
    sb.append("    {\n      \"name\": \"omnium\",\n      \"description\": ")
        .append(json("omnium-jdbc settings for omnium DataSources; a key in the URL wins"))
        .append("\n    }\n  ],\n  \"properties\": [\n");
    List<DriverPropertyInfo> keys = OmniumKeys.all();
    for (int i = 0; i < keys.size(); i++) {
      DriverPropertyInfo k = keys.get(i);
      String type = type(k);
      sb.append("    {\n      \"name\": ").append(json("omnium." + OmniumKeys.kebab(k.name)))
          .append(",\n      \"type\": ").append(json(type))
          .append(",\n      \"description\": ").append(json(k.description));
      if (k.value != null) {
        sb.append(",\n      \"defaultValue\": ")
            .append(type.equals("java.lang.String") ? json(k.value) : k.value);
      }
      sb.append("\n    },\n");
    }
    sb.append("    {\n      \"name\": \"management.health.omnium.enabled\",\n")
        .append("      \"type\": \"java.lang.Boolean\",\n")
        .append("      \"description\": \"Whether the omnium health component is enabled.\",\n")
        .append("      \"defaultValue\": true\n    },\n");
    sb.append("    {\n      \"name\": \"management.health.omnium.timeout\",\n")
        .append("      \"type\": \"java.time.Duration\",\n")
        .append("      \"description\": ")
        .append(json("Longest the health check's statement on the primary may run."))
        .append(",\n      \"defaultValue\": \"5s\"\n    }\n  ],\n  \"hints\": [");
    boolean first = true;
    for (DriverPropertyInfo k : keys) {
      if (k.choices == null || type(k).equals("java.lang.Boolean")) {
        continue;
      }
      sb.append(first ? "\n" : ",\n");
      first = false;
      sb.append("    {\n      \"name\": ").append(json("omnium." + OmniumKeys.kebab(k.name)))
          .append(",\n      \"values\": [");
      for (int j = 0; j < k.choices.length; j++) {
        sb.append(j == 0 ? "\n" : ",\n").append("        {\n          \"value\": ")
            .append(json(k.choices[j])).append("\n        }");
      }
      sb.append("\n      ]\n    }");
    }
    sb.append(first ? "]\n}\n" : "\n  ]\n}\n");
    return sb.toString();
  }

  /** Booleans and sizes are typed; durations, hosts and names stay text the driver parses. */
  static String type(DriverPropertyInfo k) {
    if (k.choices != null && Arrays.asList(k.choices).equals(List.of("true", "false"))) {
      return "java.lang.Boolean";
    }
    if (k.value != null && k.value.matches("\\d+")) {
      return "java.lang.Integer";
    }
    return "java.lang.String";
  }

  static String json(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        default -> sb.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
      }
    }
    return sb.append('"').toString();
  }
}
