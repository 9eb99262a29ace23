package dev.omnium.spring.boot;

import dev.omnium.ops.FlywayMigrationGuard;
import dev.omnium.ops.MigrationGuard;
import java.time.Duration;
import org.flywaydb.core.api.callback.Callback;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * When the application has Flyway: the omnium-ops migration guard as a Flyway callback (Boot
 * hands every {@code Callback} bean to its Flyway), and a migration strategy that retries a
 * migration that gave up on a lock, for Boot 3.5 and Boot 4.0 (whose strategy interface moved).
 * {@code omnium.migrations.guard.enabled=false} turns both off; an application's own
 * {@code FlywayMigrationStrategy} wins over the retrying one.
 */
@AutoConfiguration(beforeName = {
    "org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration",
    "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration"})
@ConditionalOnClass(name = "org.flywaydb.core.Flyway")
@ConditionalOnProperty(prefix = "omnium.migrations.guard", name = "enabled",
    matchIfMissing = true)
public class OmniumFlywayAutoConfiguration {
  static final String BOOT3_STRATEGY =
      "org.springframework.boot.autoconfigure.flyway.FlywayMigrationStrategy";
  static final String BOOT4_STRATEGY =
      "org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy";

  /** For Spring Boot; applications do not create it. */
  public OmniumFlywayAutoConfiguration() {
  }

  /**
   * The guard: {@code omnium.migrations.lock-timeout} (2s), {@code lock-retries} (5),
   * {@code max-table-bytes} (10 MB), {@code max-table-rows} (100000).
   */
  @Bean
  @ConditionalOnMissingBean
  FlywayMigrationGuard omniumFlywayMigrationGuard(Environment env) {
    MigrationGuard.Builder b = MigrationGuard.builder()
        .lockTimeout(env.getProperty("omnium.migrations.lock-timeout", Duration.class,
            Duration.ofSeconds(2)))
        .retries(env.getProperty("omnium.migrations.lock-retries", Integer.class, 5))
        .maxTableBytes(env.getProperty("omnium.migrations.max-table-bytes", Long.class,
            10L << 20))
        .maxTableRows(env.getProperty("omnium.migrations.max-table-rows", Long.class,
            100_000L));
    return new FlywayMigrationGuard(b.build());
  }

  /** The guard's callback; Boot gives every {@code Callback} bean to its Flyway. */
  @Bean
  Callback omniumFlywayCallback(FlywayMigrationGuard guard) {
    return guard.callback();
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = BOOT3_STRATEGY)
  static class Boot3 {
    @Bean
    @ConditionalOnMissingBean(type = BOOT3_STRATEGY)
    Boot3FlywayStrategy omniumFlywayMigrationStrategy(FlywayMigrationGuard guard) {
      return new Boot3FlywayStrategy(guard);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = BOOT4_STRATEGY)
  static class Boot4 {
    @Bean
    @ConditionalOnMissingBean(type = BOOT4_STRATEGY)
    Boot4FlywayStrategy omniumFlywayMigrationStrategy(FlywayMigrationGuard guard) {
      return new Boot4FlywayStrategy(guard);
    }
  }
}
