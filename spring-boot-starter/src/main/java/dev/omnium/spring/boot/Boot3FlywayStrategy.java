package dev.omnium.spring.boot;

import dev.omnium.ops.FlywayMigrationGuard;
import org.flywaydb.core.Flyway;
import org.springframework.boot.autoconfigure.flyway.FlywayMigrationStrategy;

/** Boot 3's Flyway migration strategy: migrate, retried when a migration gave up on a lock. */
final class Boot3FlywayStrategy implements FlywayMigrationStrategy {
  private final FlywayMigrationGuard guard;

  Boot3FlywayStrategy(FlywayMigrationGuard guard) {
    this.guard = guard;
  }

  @Override
  public void migrate(Flyway flyway) {
    guard.migrate(flyway);
  }
}
