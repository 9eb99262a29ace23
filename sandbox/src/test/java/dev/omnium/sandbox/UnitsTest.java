package dev.omnium.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Pure helpers, no server. */
class UnitsTest {

  @Test
  void durations() {
    assertEquals(Duration.ofMillis(500), Durations.parse("500ms"));
    assertEquals(Duration.ofSeconds(30), Durations.parse("30s"));
    assertEquals(Duration.ofMinutes(2), Durations.parse("2m"));
    assertEquals(Duration.ofHours(1), Durations.parse("1h"));
    assertEquals(Duration.ofMillis(250), Durations.parse("250"));
    assertThrows(IllegalArgumentException.class, () -> Durations.parse("5 parsecs"));
    assertThrows(IllegalArgumentException.class, () -> Durations.parse(""));
  }

  @Test
  void lsnParsingAndPageBoundaries() {
    assertEquals(0x16_B374D848L, Lsn.parse("16/B374D848"));
    assertEquals("16/B374D848", Lsn.format(Lsn.parse("16/B374D848")));
    long seg = 16L << 20;
    assertEquals(3 * 8192L, Lsn.replayTarget(3 * 8192L + 24, seg, 8192));
    assertEquals(seg, Lsn.replayTarget(seg + 40, seg, 8192));
    assertEquals(3 * 8192L + 64, Lsn.replayTarget(3 * 8192L + 64, seg, 8192));
  }

  @Test
  void configQuoting() {
    assertEquals("'it''s'", PgConfig.quote("it's"));
    assertEquals("'%m [%p] '", PgConfig.quote("%m [%p] "));
  }
}
