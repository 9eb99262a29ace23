package dev.omnium.ops.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.ops.MigrationGuard;
import dev.omnium.ops.MigrationRefusedException;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The plain Java hook, for runners other than Flyway, on PostgreSQL 18 and 15. */
class MigrationGuardIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(0).withoutHeartbeat()
      .sql("CREATE TABLE wide (id bigint PRIMARY KEY, payload text)",
          "INSERT INTO wide SELECT g, repeat('x', 200) FROM generate_series(1, 60000) g",
          "CREATE TABLE narrow (id int PRIMARY KEY)")
      .build();

  @Test
  void aBigTableBySizeIsRefusedAndNothingOfTheUnitStays() throws Exception {
    MigrationGuard guard = MigrationGuard.defaults(); // 60,000 rows, but over 10 MB
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary())) {
      MigrationRefusedException e = assertThrows(MigrationRefusedException.class,
          () -> guard.run(c, List.of("ALTER TABLE narrow ADD COLUMN a int",
              "CREATE INDEX wide_payload ON wide (payload)")));
      assertTrue(e.getMessage().contains("public.wide is ") && e.getMessage().contains(" MB, "
          + "60,000 rows"), e.getMessage());
      assertEquals(MigrationRefusedException.SQL_STATE, e.getSQLState());
      assertTrue(c.getAutoCommit(), "auto-commit restored");
    }
    assertEquals(null, SANDBOX.queryOne(SANDBOX.primary(), "SELECT attname FROM pg_attribute"
        + " WHERE attrelid = 'narrow'::regclass AND attname = 'a'"), "rolled back whole");
    try (Connection c = SANDBOX.cluster().connect(SANDBOX.primary())) {
      guard.run(c, List.of("CREATE INDEX CONCURRENTLY wide_payload ON wide (payload)"));
      assertThrows(MigrationRefusedException.class, () -> guard.run(c, List.of(
          "CREATE INDEX CONCURRENTLY a ON narrow (id)", "ALTER TABLE narrow ADD COLUMN b int")));
    }
    assertEquals("t", SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT indisvalid FROM pg_index WHERE indexrelid = 'wide_payload'::regclass"));
  }

  @Test
  void aUnitBehindAHeldLockIsRetriedAndGivesUpAfterItsRetries() throws Exception {
    MigrationGuard twice = MigrationGuard.builder().retries(1).retryPause(Duration.ofMillis(100))
        .build();
    try (Connection reader = Db.holdTable(SANDBOX, "narrow");
        Connection c = SANDBOX.cluster().connect(SANDBOX.primary())) {
      long t0 = System.nanoTime();
      SQLException e = assertThrows(SQLException.class, () -> twice.run(c, List.of(
          "ALTER TABLE narrow ADD COLUMN c int")));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertEquals("55P03", e.getSQLState());
      assertTrue(ms >= 3_900 && ms < 15_000, "two attempts of 2 s: " + ms + " ms");
      reader.rollback();
    }
    MigrationGuard guard = MigrationGuard.defaults();
    try (Connection reader = Db.holdTable(SANDBOX, "narrow");
        Connection c = SANDBOX.cluster().connect(SANDBOX.primary())) {
      Thread release = Db.commitLater(reader, 3_000);
      guard.run(c, List.of("ALTER TABLE narrow ADD COLUMN c int"));
      release.join();
    }
    assertEquals("c", SANDBOX.queryOne(SANDBOX.primary(), "SELECT attname FROM pg_attribute"
        + " WHERE attrelid = 'narrow'::regclass AND attname = 'c'"));
  }

}
