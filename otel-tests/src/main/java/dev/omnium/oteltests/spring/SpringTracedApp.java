package dev.omnium.oteltests.spring;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.EventListener;

/**
 * A Spring Boot web application on omnium's starter ({@code spring.datasource.url=jdbc:omnium:...}):
 * {@code GET /read/{n}} runs a {@code @Transactional(readOnly = true)} unit of work, {@code GET
 * /write/{n}} a read-write one ({@link UnitsService}); each prints what the server said as
 * {@code TracedApp} does. Once ready it prints {@code PAUSE} and waits for a line on stdin; then it
 * stays idle for {@code --idleMs}, prints {@code DONE} and exits.
 */
@SpringBootApplication
public class SpringTracedApp {
  private final ConfigurableApplicationContext context;

  public SpringTracedApp(ConfigurableApplicationContext context) {
    this.context = context;
  }

  public static void main(String[] args) {
    SpringApplication.run(SpringTracedApp.class, args);
  }

  @EventListener(ApplicationReadyEvent.class)
  public void ready() {
    long idle = Long.parseLong(context.getEnvironment().getProperty("idleMs", "3000"));
    Thread t = new Thread(() -> {
      try {
        System.out.println("PAUSE");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        Thread.sleep(idle);
      } catch (Exception e) {
        e.printStackTrace();
      }
      int code = SpringApplication.exit(context);
      System.out.println("DONE");
      System.out.flush();
      System.exit(code);
    }, "traced-app-end");
    t.start();
  }
}
