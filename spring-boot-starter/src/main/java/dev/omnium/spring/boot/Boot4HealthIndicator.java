package dev.omnium.spring.boot;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** The {@code omnium} component on Spring Boot 4 ({@code org.springframework.boot.health}). */
final class Boot4HealthIndicator implements HealthIndicator {
  private final OmniumHealth health;

  Boot4HealthIndicator(OmniumHealth health) {
    this.health = health;
  }

  @Override
  public Health health() {
    OmniumHealth.Result r = health.check();
    return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
  }
}
