package dev.omnium.oteltests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One span as the agent's {@code logging-otlp} exporter printed it (OTLP JSON, one export per
 * line on stderr): its scope, ids, kind, attributes (values as text) and events.
 */
record ExportedSpan(String scope, String traceId, String spanId, String parentSpanId, String name,
    int kind, Map<String, String> attributes, List<Event> events) {

  /** OTLP's SPAN_KIND_CLIENT. */
  static final int CLIENT = 3;
  private static final ObjectMapper JSON = new ObjectMapper();

  record Event(String name, Map<String, String> attributes) { }

  String attribute(String key) {
    return attributes.get(key);
  }

  /** The statement's text, under the stable or the older key. */
  String queryText() {
    String q = attributes.get("db.query.text");
    return q != null ? q : attributes.get("db.statement");
  }

  boolean isJdbc() {
    return "io.opentelemetry.jdbc".equals(scope);
  }

  /** Every span in the lines: each line holding OTLP JSON is one export. */
  static List<ExportedSpan> parse(List<String> lines) throws IOException {
    List<ExportedSpan> spans = new ArrayList<>();
    for (String line : lines) {
      int at = line.indexOf("{\"resource");
      if (at < 0) continue;
      JsonNode root = JSON.readTree(line.substring(at));
      // newer exporters wrap the export in {"resourceSpans": [...]}, older print each resource
      JsonNode resources = root.has("resourceSpans") ? root.get("resourceSpans") : JSON.createArrayNode().add(root);
      for (JsonNode resource : resources) {
        for (JsonNode scopeSpans : resource.path("scopeSpans")) {
          String scope = scopeSpans.path("scope").path("name").asText();
          for (JsonNode s : scopeSpans.path("spans")) {
            List<Event> events = new ArrayList<>();
            for (JsonNode e : s.path("events")) {
              events.add(new Event(e.path("name").asText(), attributes(e.path("attributes"))));
            }
            spans.add(new ExportedSpan(scope, s.path("traceId").asText(), s.path("spanId").asText(),
                s.path("parentSpanId").asText(""), s.path("name").asText(), s.path("kind").asInt(),
                attributes(s.path("attributes")), events));
          }
        }
      }
    }
    return spans;
  }

  private static Map<String, String> attributes(JsonNode list) {
    Map<String, String> m = new LinkedHashMap<>();
    for (JsonNode a : list) {
      JsonNode v = a.path("value");
      String text = v.has("stringValue") ? v.get("stringValue").asText()
          : v.has("intValue") ? v.get("intValue").asText()
          : v.has("boolValue") ? v.get("boolValue").asText()
          // older exporters write an empty string as an empty value: {"key": ..., "value": {}}
          : v.isEmpty() ? ""
          : v.toString();
      m.put(a.path("key").asText(), text);
    }
    return m;
  }
}
