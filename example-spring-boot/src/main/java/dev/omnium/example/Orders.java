package dev.omnium.example;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Plain Spring: {@code @Transactional(readOnly = true)} is all the routing the code says. */
@Service
public class Orders {
  static final String SERVED_BY = "SELECT pg_is_in_recovery() AS in_recovery,"
      + " inet_server_port() AS port, current_setting('application_name') AS app";

  private final JdbcTemplate jdbc;

  public Orders(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  @Transactional(readOnly = true)
  public Map<String, Object> recent() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("servedBy", jdbc.queryForMap(SERVED_BY));
    List<Map<String, Object>> rows = jdbc.queryForList(
        "SELECT id, item, placed_at FROM orders ORDER BY id DESC LIMIT 5");
    out.put("orders", rows);
    return out;
  }

  @Transactional
  public Map<String, Object> place(String item) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("servedBy", jdbc.queryForMap(SERVED_BY));
    out.put("id", jdbc.queryForObject("INSERT INTO orders (item) VALUES (?) RETURNING id",
        Long.class, item));
    return out;
  }
}
