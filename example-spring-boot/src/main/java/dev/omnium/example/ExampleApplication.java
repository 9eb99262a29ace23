package dev.omnium.example;

import dev.omnium.sandbox.Heartbeat;
import dev.omnium.sandbox.PgCluster;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;

/**
 * A small orders service on the omnium starter. Its only database setting is
 * {@code spring.datasource.url=jdbc:omnium:postgresql://PRIMARY/DB?replica=REPLICA}; without one it
 * starts a disposable sandbox primary + streaming replica and points the URL there.
 *
 * <pre>
 * curl localhost:8080/orders                  # read-only: served by the replica
 * curl -X POST localhost:8080/orders          # read-write: the primary
 * curl localhost:8080/actuator/health/omnium  # the omnium health component
 * curl localhost:8080/actuator/metrics/omnium.routes
 * curl -X POST localhost:8080/sandbox/pause   # pause the replica's replay: reads take the fallback
 * curl -X POST localhost:8080/sandbox/resume
 * </pre>
 */
@SpringBootApplication
public class ExampleApplication {
  public static void main(String[] args) throws SQLException {
    run(args);
  }

  /** Starts the service (and a sandbox when no database is configured); closing it stops both. */
  public static ConfigurableApplicationContext run(String... args) throws SQLException {
    SpringApplication app = new SpringApplication(ExampleApplication.class);
    if (configured(args)) {
      return app.run(args);
    }
    PgCluster cluster = PgCluster.builder().replicas(1).start();
    try {
      Heartbeat.createTable(cluster);
      Map<String, Object> db = new HashMap<>();
      db.put("spring.datasource.url", cluster.omniumUrl());
      db.put("spring.datasource.username", cluster.user());
      if (cluster.password() != null) db.put("spring.datasource.password", cluster.password());
      app.setDefaultProperties(db);
      app.addInitializers(ctx -> ctx.getBeanFactory().registerSingleton("sandbox", cluster));
      ConfigurableApplicationContext context = app.run(args);
      context.addApplicationListener(e -> {
        if (e instanceof ContextClosedEvent) cluster.close();
      });
      String port = context.getEnvironment().getProperty("local.server.port");
      System.out.printf("%nomnium example on a sandbox (PostgreSQL %s): primary %s, replica %s%n"
          + "  curl localhost:%s/orders | curl -X POST localhost:%s/orders%n"
          + "  curl localhost:%s/actuator/health/omnium"
          + " | curl localhost:%s/actuator/metrics/omnium.routes%n"
          + "  curl -X POST localhost:%s/sandbox/pause"
          + " | curl -X POST localhost:%s/sandbox/resume%n%n",
          cluster.version(), cluster.primary().hostPort(), cluster.replica(0).hostPort(),
          port, port, port, port, port, port);
      return context;
    } catch (SQLException | RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
  }

  private static boolean configured(String... args) {
    for (String a : args) {
      if (a.startsWith("--spring.datasource.url=")) return true;
    }
    return System.getProperty("spring.datasource.url") != null
        || System.getenv("SPRING_DATASOURCE_URL") != null;
  }
}
