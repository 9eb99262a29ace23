package dev.omnium.example;

import dev.omnium.sandbox.PgCluster;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The HTTP side; {@code /sandbox/*} exists only when the example started its own sandbox. */
@RestController
public class Web {
  private final Orders orders;
  private final ObjectProvider<PgCluster> sandbox;

  public Web(Orders orders, ObjectProvider<PgCluster> sandbox) {
    this.orders = orders;
    this.sandbox = sandbox;
  }

  @GetMapping("/orders")
  public Map<String, Object> recent() {
    return orders.recent();
  }

  @PostMapping("/orders")
  public Map<String, Object> place(
      @RequestParam(name = "item", defaultValue = "scarf") String item) {
    return orders.place(item);
  }

  @PostMapping("/sandbox/pause")
  public ResponseEntity<String> pause() {
    PgCluster c = sandbox.getIfAvailable();
    if (c == null) return ResponseEntity.notFound().build();
    c.pauseReplay(c.replica(0));
    return ResponseEntity.ok("replay paused on the replica: within maxAge, reads take the fallback"
        + " route and /actuator/health/omnium shows the replica as not fresh (still UP)\n");
  }

  @PostMapping("/sandbox/resume")
  public ResponseEntity<String> resume() {
    PgCluster c = sandbox.getIfAvailable();
    if (c == null) return ResponseEntity.notFound().build();
    c.resumeReplay(c.replica(0));
    return ResponseEntity.ok("replay resumed\n");
  }
}
