package dev.omnium.conformance;

import java.util.List;

/**
 * Every difference from pgjdbc the suite accepts, each narrowed to one scenario and one
 * observation, with the exact values on both sides and the reason. Nothing here hides a whole
 * category: a new difference in the same scenario still fails.
 */
final class KnownDifferences {
  /** One accepted difference; {@code mode} "*" means every omnium mode. */
  record Known(String mode, String scenario, String key, String pgjdbc, String omnium,
      String reason) { }

  static final List<Known> ALL = List.of();

  private KnownDifferences() { }

  /** @return why this difference is accepted, or null when it is a mismatch */
  static String reason(String mode, String scenario, String key, String pgjdbc, String omnium) {
    for (Known k : ALL) {
      if ((k.mode().equals("*") || k.mode().equals(mode)) && k.scenario().equals(scenario)
          && k.key().equals(key) && k.pgjdbc().equals(String.valueOf(pgjdbc))
          && k.omnium().equals(String.valueOf(omnium))) {
        return k.reason();
      }
    }
    return null;
  }
}
