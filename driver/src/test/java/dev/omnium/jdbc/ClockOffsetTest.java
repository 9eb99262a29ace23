package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** NTP-style offset: midpoint of request and response; the window's shortest round trip wins. */
class ClockOffsetTest {
  private static final long T = 1_700_000_000_000_000L; // client epoch micros

  @Test
  void unknownUntilTheFirstSample() {
    ClockOffset o = new ClockOffset();
    assertFalse(o.known());
    assertEquals(-1, o.uncertaintyMicros());
    assertEquals("unknown", o.toString());
  }

  @Test
  void offsetIsServerTimeMinusTheMidpoint() {
    ClockOffset o = new ClockOffset();
    // sent at T, answered 2 ms later, the server said T + 1 ms + 3 s: 3 s ahead, ±1 ms.
    o.record(T, T + 2_000, (T + 1_000 + 3_000_000) / 1e6);
    assertTrue(o.known());
    assertEquals(3_000_000, o.offsetMicros(), 200); // a double holds epoch micros to ~0.2 µs
    assertEquals(1_000, o.uncertaintyMicros());
    assertEquals("+3.000s ±0.001s", o.toString());
  }

  @Test
  void aServerBehindIsNegative() {
    ClockOffset o = new ClockOffset();
    o.record(T, T + 1_000, (T + 500 - 30_000_000) / 1e6);
    assertEquals(-30_000_000, o.offsetMicros(), 200);
  }

  @Test
  void theShortestRoundTripWins() {
    ClockOffset o = new ClockOffset();
    o.record(T, T + 400_000, (T + 350_000) / 1e6); // slow answer: midpoint error up to 200 ms
    o.record(T + 1_000_000, T + 1_002_000, (T + 1_001_000) / 1e6);
    assertEquals(0, o.offsetMicros(), 200);
    assertEquals(1_000, o.uncertaintyMicros());
  }

  @Test
  void onlyTheLastWindowCounts() {
    ClockOffset o = new ClockOffset();
    o.record(T, T + 10, T / 1e6); // very short round trip, old
    for (int i = 1; i <= ClockOffset.WINDOW; i++) {
      long s = T + i * 1_000_000L;
      o.record(s, s + 2_000, (s + 1_000 + 5_000_000) / 1e6);
    }
    assertEquals(5_000_000, o.offsetMicros(), 200);
  }

  @Test
  void nonsenseIsIgnored() {
    ClockOffset o = new ClockOffset();
    o.record(T, T - 1, T / 1e6);
    o.record(T, T + 1, Double.NaN);
    assertFalse(o.known());
  }
}
