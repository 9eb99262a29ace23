package dev.omnium.spring.boot;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/** The {@code omnium} component on Spring Boot 3 ({@code org.springframework.boot.actuate}). */
final class Boot3HealthIndicator implements HealthIndicator {
  private final OmniumHealth health;

  Boot3HealthIndicator(OmniumHealth health) {
    this.health = health;
  }

  @Override
  public Health health() {
    OmniumHealth.Result r = health.check();
    return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
  }
}
