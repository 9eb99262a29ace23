package dev.omnium.agenttests.spring;

import dev.omnium.agenttests.apps.Report;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Read-only and read-write units of work, as a Spring application writes them. */
@Service
public class WhereService {
  private final JdbcTemplate jdbc;

  public WhereService(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  @Transactional(readOnly = true)
  public void read() {
    jdbc.queryForObject("SELECT count(*) FROM agent_writes", Long.class);
    report("read");
  }

  @Transactional
  public void write() {
    jdbc.update(Report.INSERT, "spring");
    report("write");
  }

  private void report(String unit) {
    jdbc.query(Report.SQL, rs -> {
      Report.line(unit, rs.getBoolean(1), rs.getInt(2), rs.getString(3));
    });
  }
}
