package dev.omnium.boot.it;

import java.util.Map;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A plain Spring Boot web service: Boot's HikariCP pool, JdbcTemplate, {@code @Transactional}.
 * Nothing omnium-specific in the code; the starter and {@code spring.datasource.url} do the rest.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({StarterApp.Reads.class, StarterApp.Writes.class, StarterApp.Web.class})
public class StarterApp {
  /** What the session that answered reports about itself. */
  static final String WHERE = "SELECT pg_is_in_recovery() AS in_recovery,"
      + " inet_server_port() AS port, current_setting('application_name') AS app,"
      + " current_user AS usr,"
      + " current_setting('statement_timeout') AS statement_timeout,"
      + " current_setting('lock_timeout') AS lock_timeout";

  /** Read-only work. */
  public static class Reads {
    private final JdbcTemplate jdbc;

    public Reads(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Transactional(readOnly = true)
    public Map<String, Object> where() {
      return jdbc.queryForMap(WHERE);
    }
  }

  /** Read-write work. */
  public static class Writes {
    private final JdbcTemplate jdbc;

    public Writes(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Transactional
    public Map<String, Object> where() {
      jdbc.update("CREATE TABLE IF NOT EXISTS visits (at timestamptz NOT NULL DEFAULT now())");
      jdbc.update("INSERT INTO visits DEFAULT VALUES");
      return jdbc.queryForMap(WHERE);
    }
  }

  /** {@code GET /read} runs a read-only transaction, {@code POST /write} a read-write one. */
  @RestController
  public static class Web {
    private final Reads reads;
    private final Writes writes;

    public Web(Reads reads, Writes writes) {
      this.reads = reads;
      this.writes = writes;
    }

    @GetMapping("/read")
    public Map<String, Object> read() {
      return reads.where();
    }

    @PostMapping("/write")
    public Map<String, Object> write() {
      return writes.where();
    }
  }
}
