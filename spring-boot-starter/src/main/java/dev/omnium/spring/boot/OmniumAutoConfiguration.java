package dev.omnium.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDriver;
import dev.omnium.micrometer.OmniumMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Boot's HikariCP DataSource over {@code jdbc:omnium:} URLs: {@code omnium.*} properties reach the
 * driver, and the routers report Micrometer meters when Micrometer is present.
 */
@AutoConfiguration
@ConditionalOnClass({OmniumDriver.class, HikariDataSource.class})
public class OmniumAutoConfiguration {
  /** For Spring Boot; applications do not create it. */
  public OmniumAutoConfiguration() {
  }

  /** Static: a post-processor must not pull other beans in early. */
  @Bean
  static OmniumDataSourcePostProcessor omniumDataSourcePostProcessor(Environment environment) {
    return new OmniumDataSourcePostProcessor(environment, new OmniumDataSources());
  }

  /**
   * The omnium DataSources of the context, filled as they are created.
   *
   * @param postProcessor the post-processor that finds them
   * @return the registry
   */
  @Bean
  OmniumDataSources omniumDataSources(OmniumDataSourcePostProcessor postProcessor) {
    return postProcessor.registry();
  }

  /** Micrometer meters for every router, and HikariCP's meters for their internal pools. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
  static class Metrics {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    OmniumMetrics omniumMetrics() {
      return new OmniumMetrics();
    }
  }
}
