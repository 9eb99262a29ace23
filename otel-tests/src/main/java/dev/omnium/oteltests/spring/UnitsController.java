package dev.omnium.oteltests.spring;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /read/{n}}, {@code GET /write/{n}}: one unit of work each, in its transaction. */
@RestController
public class UnitsController {
  private final UnitsService units;

  public UnitsController(UnitsService units) {
    this.units = units;
  }

  @GetMapping("/read/{n}")
  public String read(@PathVariable("n") int n) {
    return units.readOnly(n);
  }

  @GetMapping("/write/{n}")
  public String write(@PathVariable("n") int n) {
    return units.readWrite(n);
  }
}
