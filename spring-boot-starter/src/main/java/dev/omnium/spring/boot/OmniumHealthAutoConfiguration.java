package dev.omnium.spring.boot;

import java.time.Duration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The {@code omnium} health component, for Boot 3 ({@code org.springframework.boot.actuate.health})
 * or Boot 4 ({@code org.springframework.boot.health.contributor}), whichever is present.
 * {@code management.health.omnium.enabled=false} turns it off.
 */
@AutoConfiguration(after = OmniumAutoConfiguration.class)
@ConditionalOnProperty(prefix = "management.health.omnium", name = "enabled",
    matchIfMissing = true)
@Conditional(OnOmniumUrlCondition.class)
public class OmniumHealthAutoConfiguration {
  static final String BOOT4 = "org.springframework.boot.health.contributor.HealthIndicator";
  static final String BOOT3 = "org.springframework.boot.actuate.health.HealthIndicator";

  /** For Spring Boot; applications do not create it. */
  public OmniumHealthAutoConfiguration() {
  }

  static OmniumHealth health(OmniumDataSources sources, Environment environment) {
    Duration timeout = environment.getProperty("management.health.omnium.timeout",
        Duration.class, Duration.ofSeconds(5));
    return new OmniumHealth(sources, timeout);
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = BOOT4)
  static class Boot4 {
    @Bean
    @ConditionalOnMissingBean(name = "omniumHealthIndicator")
    Boot4HealthIndicator omniumHealthIndicator(OmniumDataSources sources, Environment env) {
      return new Boot4HealthIndicator(health(sources, env));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = BOOT3)
  @ConditionalOnMissingClass(BOOT4)
  static class Boot3 {
    @Bean
    @ConditionalOnMissingBean(name = "omniumHealthIndicator")
    Boot3HealthIndicator omniumHealthIndicator(OmniumDataSources sources, Environment env) {
      return new Boot3HealthIndicator(health(sources, env));
    }
  }
}
