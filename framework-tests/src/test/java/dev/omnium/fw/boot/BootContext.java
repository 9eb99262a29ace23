package dev.omnium.fw.boot;

import dev.omnium.sandbox.testkit.PgSandbox;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Starts a Spring Boot application (no web server) on the sandbox the way docs/frameworks.md
 * tells a Boot user to configure it: {@code spring.datasource.url} a {@code jdbc:omnium:} URL
 * without credentials, the user apart, omnium's driver class, Boot's own HikariCP pool.
 */
public final class BootContext {
  private BootContext() { }

  /**
   * @param application the {@code @SpringBootApplication} class
   * @param sandbox the running cluster
   * @param app the application name (the router's name)
   * @param urlExtra omnium keys for the URL
   * @param properties the test's own properties ({@code name=value})
   * @return the started context; the caller closes it
   */
  public static ConfigurableApplicationContext start(Class<?> application, PgSandbox sandbox,
      String app, String urlExtra, String... properties) {
    List<String> all = new ArrayList<>(List.of(
        "spring.main.banner-mode=off",
        "spring.main.log-startup-info=false",
        "spring.datasource.url=" + sandbox.bareUrl(app, urlExtra),
        "spring.datasource.username=" + sandbox.cluster().user(),
        "spring.datasource.driver-class-name=dev.omnium.jdbc.OmniumDriver"));
    all.addAll(List.of(properties));
    return new SpringApplicationBuilder(application)
        .web(WebApplicationType.NONE)
        .properties(all.toArray(String[]::new))
        .run();
  }
}
