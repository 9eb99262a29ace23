package dev.omnium.spring.boot;

import dev.omnium.jdbc.OmniumDriver;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Boot infers the driver class from the URL's prefix and knows no {@code jdbc:omnium:}: when
 * {@code spring.datasource.url} is an omnium URL and no driver class is set, this names
 * {@link OmniumDriver}, as the lowest-precedence source (anything the user sets wins).
 * Boot 4 still runs post-processors registered under this (deprecated there) interface.
 */
public final class OmniumEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {
  static final String URL = "spring.datasource.url";
  static final String DRIVER = "spring.datasource.driver-class-name";
  static final String SOURCE = "omnium-driver-class";

  /** Instantiated by Spring Boot from {@code META-INF/spring.factories}. */
  public OmniumEnvironmentPostProcessor() {
  }

  @Override
  public void postProcessEnvironment(ConfigurableEnvironment environment,
      SpringApplication application) {
    String url = environment.getProperty(URL);
    if (url == null || !new OmniumDriver().acceptsURL(url.trim())) {
      return;
    }
    String driver = environment.getProperty(DRIVER);
    if (driver != null && !driver.isBlank()) {
      return;
    }
    environment.getPropertySources().addLast(new MapPropertySource(SOURCE,
        Map.of(DRIVER, OmniumDriver.class.getName())));
  }

  /** After the config files are loaded (ConfigDataEnvironmentPostProcessor). */
  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
