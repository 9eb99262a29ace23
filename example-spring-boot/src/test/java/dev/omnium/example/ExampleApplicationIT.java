package dev.omnium.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/** The example as its README command runs it: its own sandbox, routing, health and metrics. */
class ExampleApplicationIT {
  @Test
  void theExampleShowsRoutingHealthAndMetricsOnItsSandbox() throws Exception {
    try (ConfigurableApplicationContext context = ExampleApplication.run("--server.port=0")) {
      String base = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
      HttpClient http = HttpClient.newHttpClient();
      String write = send(http, HttpRequest.newBuilder(URI.create(base + "/orders?item=tea"))
          .POST(HttpRequest.BodyPublishers.noBody()));
      assertTrue(write.contains("\"in_recovery\":false")
          && write.contains("\"app\":\"example\""), write);
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      String read = "";
      while (System.nanoTime() < end && !read.contains("\"in_recovery\":true")) {
        read = send(http, HttpRequest.newBuilder(URI.create(base + "/orders")).GET());
        Thread.sleep(50);
      }
      assertTrue(read.contains("\"in_recovery\":true")
          && read.contains("\"app\":\"example:replica\""), read);
      assertTrue(read.contains("\"item\":\"tea\""), "the replica has the order: " + read);
      String health = send(http,
          HttpRequest.newBuilder(URI.create(base + "/actuator/health/omnium")).GET());
      assertTrue(health.startsWith("{\"status\":\"UP\""), health);
      String routes = send(http,
          HttpRequest.newBuilder(URI.create(base + "/actuator/metrics/omnium.routes")).GET());
      assertTrue(routes.contains("\"name\":\"omnium.routes\""), routes);
    }
  }

  static String send(HttpClient http, HttpRequest.Builder request) throws Exception {
    HttpResponse<String> res = http.send(request.timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, res.statusCode(), res.body());
    return res.body();
  }
}
