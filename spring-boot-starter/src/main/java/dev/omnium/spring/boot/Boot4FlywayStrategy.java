package dev.omnium.spring.boot;

import dev.omnium.ops.FlywayMigrationGuard;
import org.flywaydb.core.Flyway;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;

/** Boot 4's Flyway migration strategy: migrate, retried when a migration gave up on a lock. */
final class Boot4FlywayStrategy implements FlywayMigrationStrategy {
  private final FlywayMigrationGuard guard;

  Boot4FlywayStrategy(FlywayMigrationGuard guard) {
    this.guard = guard;
  }

  @Override
  public void migrate(Flyway flyway) {
    guard.migrate(flyway);
  }
}
