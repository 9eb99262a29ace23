package dev.omnium.oteltests.spring;

import io.opentelemetry.api.trace.Span;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The units of work of {@link SpringTracedApp} (requested through {@link UnitsController}), each printing {@code UNIT n traceId spanId} of the
 * request's span (the agent's HTTP server span, through the application's OpenTelemetry API) and
 * {@code RAN tag inRecovery port} per statement.
 */
@Service
public class UnitsService {
  private final JdbcTemplate jdbc;

  public UnitsService(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  @Transactional(readOnly = true)
  public String readOnly(int n) {
    unit(n);
    return ran("SELECT pg_is_in_recovery() AS r" + n + "a, inet_server_port()", "r" + n + "a")
        + ran("SELECT pg_is_in_recovery() AS r" + n + "b, inet_server_port() WHERE ? = 1", "r" + n + "b", 1);
  }

  @Transactional
  public String readWrite(int n) {
    unit(n + 1000);
    return ran("INSERT INTO otel_writes (unit) VALUES (?) RETURNING pg_is_in_recovery() AS w" + n
        + ", inet_server_port()", "w" + n, n);
  }

  private static void unit(int n) {
    String line = "UNIT " + n + " " + Span.current().getSpanContext().getTraceId() + " "
        + Span.current().getSpanContext().getSpanId();
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }

  private String ran(String sql, String tag, Object... args) {
    String line = jdbc.queryForObject(sql, (rs, i) -> "RAN " + tag + " " + rs.getBoolean(1) + " " + rs.getInt(2), args);
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
    return line + "\n";
  }
}
