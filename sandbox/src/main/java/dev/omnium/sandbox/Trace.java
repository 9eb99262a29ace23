package dev.omnium.sandbox;

/**
 * Step timings on stderr when {@code -Domnium.sandbox.trace=true}: shows where start-up time goes.
 */
final class Trace {

  private static final boolean ON = Boolean.getBoolean("omnium.sandbox.trace");
  private final String what;
  private final long t0 = System.nanoTime();
  private long last = t0;

  Trace(String what) {
    this.what = what;
  }

  void step(String step) {
    if (!ON) {
      return;
    }
    long now = System.nanoTime();
    System.err.printf("[omnium-sandbox %s] %-18s +%4d ms (%d ms)%n", what, step,
        (now - last) / 1_000_000, (now - t0) / 1_000_000);
    last = now;
  }
}
