package dev.omnium.agenttests.spring;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot 3 application, packaged as an executable fat jar, with the auto-configured
 * HikariCP pool ({@code spring.datasource.url=jdbc:postgresql://...}) and {@link WhereService}'s
 * {@code @Transactional(readOnly = true)} read and {@code @Transactional} write.
 *
 * <pre>
 * java -jar agent-tests-boot.jar --spring.datasource.url=URL --spring.datasource.username=USER
 *      --rounds=N --pauseMs=MS
 * </pre>
 */
@SpringBootApplication
public class SpringApp {

  public static void main(String[] args) {
    System.exit(SpringApplication.exit(SpringApplication.run(SpringApp.class, args)));
  }

  @Bean
  CommandLineRunner rounds(WhereService service, @Value("${rounds:10}") int rounds,
      @Value("${pauseMs:100}") long pauseMs) {
    return args -> {
      for (int i = 0; i < rounds; i++) {
        service.read();
        service.write();
        Thread.sleep(pauseMs);
      }
      System.out.println("DONE");
    };
  }
}
