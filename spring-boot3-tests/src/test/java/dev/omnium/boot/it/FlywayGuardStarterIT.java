package dev.omnium.boot.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.ops.FlywayMigrationGuard;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter with Flyway on the class path (Boot 3.5 here, Boot 4.0 in spring-boot4-tests):
 * Boot's own Flyway runs the application's migrations through the omnium-ops guard, with no
 * setting: a plain index on a big table stops the start with the guard's message, and a
 * migration behind another session's lock is retried until it goes through.
 */
class FlywayGuardStarterIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1)
      .sql("CREATE TABLE big (id bigint PRIMARY KEY, x int)",
          "INSERT INTO big SELECT g, g % 10 FROM generate_series(1, 120000) g",
          "CREATE TABLE small (id int PRIMARY KEY)")
      .build();

  @TempDir
  static Path dir;

  /** A bare application: Boot's DataSource and Flyway, nothing else. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
  }

  static ConfigurableApplicationContext start(String name, String sql) throws Exception {
    Path d = Files.createDirectories(dir.resolve(name));
    Files.writeString(d.resolve("V1__" + name + ".sql"), sql);
    return new SpringApplicationBuilder(App.class).properties(
        "spring.main.banner-mode=off",
        "spring.main.web-application-type=none",
        "spring.datasource.url=" + SANDBOX.cluster().omniumUrl(),
        "spring.datasource.username=" + SANDBOX.cluster().user(),
        "omnium.application-name=flyway-" + name,
        "spring.flyway.locations=filesystem:" + d,
        "spring.flyway.schemas=" + name,
        "spring.flyway.create-schemas=true").run();
  }

  @Test
  void aPlainIndexOnABigTableStopsTheStartWithTheGuardsMessage() throws Exception {
    Exception e = assertThrows(Exception.class, () -> start("refused",
        "CREATE INDEX big_x ON public.big (x);").close());
    StringBuilder m = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      m.append(t.getMessage()).append(" | ");
    }
    assertTrue(m.toString().contains("refused: CREATE INDEX big_x ON public.big (x)"), m
        .toString());
    assertTrue(m.toString().contains("Fix: CREATE INDEX CONCURRENTLY"), m.toString());
    assertEquals(null, SANDBOX.queryOne(SANDBOX.primary(), "SELECT to_regclass('public.big_x')"));
  }

  @Test
  void aMigrationBehindAHeldLockIsRetriedUntilItGoesThrough() throws Exception {
    long t0 = System.nanoTime();
    try (Connection reader = SANDBOX.cluster().connect(SANDBOX.primary())) {
      reader.setAutoCommit(false);
      try (Statement st = reader.createStatement()) {
        st.execute("SELECT count(*) FROM public.small");
      }
      Thread release = new Thread(() -> {
        Poll.pause(5_000);
        try {
          reader.commit();
        } catch (Exception ex) {
          throw new IllegalStateException(ex);
        }
      });
      release.start();
      try (ConfigurableApplicationContext ctx = start("retried",
          "ALTER TABLE public.small ADD COLUMN note text;")) {
        assertNotNull(ctx.getBean(FlywayMigrationGuard.class));
      }
      release.join();
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(ms >= 4_500, "the migration cannot have run before the reader let go: " + ms);
    assertEquals("note", SANDBOX.queryOne(SANDBOX.primary(), "SELECT attname FROM pg_attribute"
        + " WHERE attrelid = 'public.small'::regclass AND attname = 'note'"));
  }
}
