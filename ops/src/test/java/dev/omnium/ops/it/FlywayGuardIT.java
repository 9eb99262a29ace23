package dev.omnium.ops.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.ops.FlywayMigrationGuard;
import dev.omnium.ops.MigrationGuard;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The migration guard as a Flyway callback, on a real primary: a plain CREATE INDEX on a big
 * table refused before it runs (and CONCURRENTLY let through, outside a transaction); a
 * migration that queues behind another session's lock gives up after 2 s and is retried until
 * the lock is gone; the lock timeout the server saw. Runs on Flyway 11 (pg18, pg15) and on
 * Flyway 10 (the flyway10 execution).
 */
class FlywayGuardIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(0).withoutHeartbeat().build();

  @TempDir
  static Path dir;

  @BeforeAll
  static void bigTable() throws Exception {
    SANDBOX.execOnPrimary("CREATE TABLE public.orders (id bigint PRIMARY KEY, customer int,"
        + " note text)", "INSERT INTO public.orders SELECT g, g % 1000, 'order ' || g"
        + " FROM generate_series(1, 150000) g");
  }

  @Test
  void theFlywayOnTheClassPathIsTheOneThisExecutionTests() throws Exception {
    String expected = System.getProperty("omnium.flyway.expected", "11");
    String version;
    try (InputStream in = Flyway.class.getResourceAsStream(
        "/org/flywaydb/core/internal/version.txt")) {
      version = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    }
    assertTrue(version != null && version.startsWith(expected + "."), "Flyway " + version
        + ", expected " + expected + ".x");
  }

  @Test
  void aPlainIndexOnABigTableIsRefusedAndConcurrentlyRunsOutsideATransaction() throws Exception {
    Path sql = migrations("refuse",
        "V1__index.sql", "CREATE INDEX orders_customer ON public.orders (customer);");
    FlywayMigrationGuard guard = new FlywayMigrationGuard(MigrationGuard.defaults());
    Flyway flyway = flyway("refuse", sql, guard);

    FlywayException e = assertThrows(FlywayException.class, () -> guard.migrate(flyway));
    String m = messages(e);
    assertTrue(m.contains("refused: CREATE INDEX orders_customer ON public.orders (customer)"),
        m);
    assertTrue(m.contains("public.orders is") && m.contains("over 100,000 rows"), m);
    assertTrue(m.contains("Fix: CREATE INDEX CONCURRENTLY"), m);
    assertEquals(null, SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT to_regclass('public.orders_customer')"), "the refused index was not built");

    Files.writeString(sql.resolve("V1__index.sql"),
        "CREATE INDEX CONCURRENTLY orders_customer ON public.orders (customer);");
    // Under Flyway's default transactional lock it would wait for Flyway's own transaction
    // forever: refused, saying so.
    FlywayException locked = assertThrows(FlywayException.class,
        () -> guard.migrate(flyway("refuse", sql, guard)));
    assertTrue(messages(locked).contains("postgresql.transactional.lock=false"),
        messages(locked));
    SANDBOX.execOnPrimary("DELETE FROM refuse.flyway_schema_history WHERE NOT success");
    guard.migrate(Flyway.configure().configuration(flyway("refuse", sql, guard)
        .getConfiguration()).configuration(Map.of("flyway.postgresql.transactional.lock",
        "false")).load());
    assertEquals("t", SANDBOX.queryOne(SANDBOX.primary(), "SELECT indisvalid FROM pg_index"
        + " WHERE indexrelid = 'public.orders_customer'::regclass"));
    assertEquals("true", SANDBOX.queryOne(SANDBOX.primary(), "SELECT success::text FROM"
        + " refuse.flyway_schema_history WHERE version = '1'"));
  }

  @Test
  void aTypeChangeOnABigTableIsRefused() throws Exception {
    Path sql = migrations("types", "V1__type.sql",
        "ALTER TABLE public.orders ALTER COLUMN customer TYPE bigint;");
    FlywayMigrationGuard guard = new FlywayMigrationGuard(MigrationGuard.defaults());
    FlywayException e = assertThrows(FlywayException.class,
        () -> guard.migrate(flyway("types", sql, guard)));
    assertTrue(messages(e).contains("ALTER COLUMN ... TYPE rewrites it"), messages(e));
    assertEquals("integer", SANDBOX.queryOne(SANDBOX.primary(), "SELECT format_type(atttypid,"
        + " atttypmod) FROM pg_attribute WHERE attrelid = 'public.orders'::regclass"
        + " AND attname = 'customer'"));
  }

  @Test
  void aMigrationBehindAHeldLockGivesUpAfterTheLockTimeoutAndIsRetried() throws Exception {
    SANDBOX.execOnPrimary("CREATE TABLE public.accounts (id int PRIMARY KEY)",
        "CREATE TABLE public.seen (lock_timeout text, in_transaction boolean)");
    String migration = "ALTER TABLE public.accounts ADD COLUMN note text;\n"
        + "INSERT INTO public.seen SELECT current_setting('lock_timeout'),"
        + " now() <> statement_timestamp();\n";
    FlywayMigrationGuard guard = new FlywayMigrationGuard(MigrationGuard.defaults());

    // Without the retries: the migration gives up after 2 s with 55P03, and nothing stays.
    Path once = migrations("once", "V1__note.sql", migration);
    try (Connection reader = Db.holdTable(SANDBOX, "public.accounts")) {
      long t0 = System.nanoTime();
      FlywayException e = assertThrows(FlywayException.class,
          () -> flyway("once", once, guard).migrate());
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(messages(e).contains("55P03") || messages(e).contains("lock timeout"),
          messages(e));
      assertTrue(ms >= 1_900 && ms < 10_000, "gave up after " + ms + " ms");
      reader.rollback();
    }
    assertEquals("0", SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM public.seen"));

    // With them: the first attempts give up, the reader lets go after 5 s, a retry succeeds.
    Path retried = migrations("retried", "V1__note.sql", migration);
    long t0 = System.nanoTime();
    try (Connection reader = Db.holdTable(SANDBOX, "public.accounts")) {
      Thread release = Db.commitLater(reader, 5_000);
      guard.migrate(flyway("retried", retried, guard));
      release.join();
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(ms >= 4_500, "the migration cannot have run before the reader let go: " + ms);
    assertEquals("note", SANDBOX.queryOne(SANDBOX.primary(), "SELECT attname FROM pg_attribute"
        + " WHERE attrelid = 'public.accounts'::regclass AND attname = 'note'"));
    assertEquals("2s|true", SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT lock_timeout || '|' || in_transaction FROM public.seen"));
    assertEquals("1", SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT count(*) FROM retried.flyway_schema_history WHERE success AND version = '1'"));
    // The session's own lock_timeout is left as it was after a migration.
    assertEquals("0", SANDBOX.queryOne(SANDBOX.primary(), "SHOW lock_timeout"));
  }


  static Path migrations(String name, String file, String sql) throws Exception {
    Path d = Files.createDirectories(dir.resolve(name));
    Files.writeString(d.resolve(file), sql);
    return d;
  }

  static Flyway flyway(String schema, Path location, FlywayMigrationGuard guard) {
    return Flyway.configure()
        .dataSource(SANDBOX.primary().jdbcUrl(), SANDBOX.cluster().user(), SANDBOX.password())
        .schemas(schema).createSchemas(true)
        .locations("filesystem:" + location)
        .callbacks(guard.callback())
        .load();
  }

  static String messages(Throwable e) {
    StringBuilder sb = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      sb.append(t.getMessage()).append(" | ");
      if (t instanceof SQLException) {
        sb.append(((SQLException) t).getSQLState()).append(" | ");
      }
    }
    return sb.toString();
  }
}
