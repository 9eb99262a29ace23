package dev.omnium.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.YearMonth;
import org.junit.jupiter.api.Test;

class MonthsTest {

  @Test
  void parsesTheBoundsPostgresPrints() {
    Months.Range r = Months.parseRange(
        "FOR VALUES FROM ('2026-01-01 00:00:00+00') TO ('2026-02-01 00:00:00+00')");
    assertEquals(YearMonth.of(2026, 1), r.exactMonth());
    assertEquals(YearMonth.of(2026, 1), Months.parseRange(
        "FOR VALUES FROM ('2026-01-01') TO ('2026-02-01')").exactMonth());
    assertEquals(YearMonth.of(2026, 1), Months.parseRange(
        "FOR VALUES FROM ('2026-01-01 00:00:00') TO ('2026-02-01 00:00:00')").exactMonth());
    // another time zone's midnight is no UTC month
    Months.Range ny = Months.parseRange(
        "FOR VALUES FROM ('2026-01-01 00:00:00-05') TO ('2026-02-01 00:00:00-05')");
    assertEquals(LocalDateTime.of(2026, 1, 1, 5, 0), ny.from());
    assertNull(ny.exactMonth());
    Months.Range open = Months.parseRange("FOR VALUES FROM (MINVALUE) TO ('2025-01-01')");
    assertNull(open.from());
    assertTrue(open.covers(YearMonth.of(2024, 12)));
    assertFalse(open.overlaps(YearMonth.of(2025, 1)));
    assertNull(Months.parseRange("DEFAULT"));
    assertNull(Months.parseRange("FOR VALUES IN (1, 2)"));
    assertNull(Months.parseRange("FOR VALUES FROM ('2026-01-01', 1) TO ('2026-02-01', 1)"));
  }

  @Test
  void coverageAndOverlap() {
    Months.Range year = Months.parseRange("FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')");
    assertTrue(year.covers(YearMonth.of(2026, 12)));
    assertFalse(year.covers(YearMonth.of(2027, 1)));
    Months.Range half = Months.parseRange("FOR VALUES FROM ('2026-01-15') TO ('2026-03-01')");
    assertFalse(half.covers(YearMonth.of(2026, 1)));
    assertTrue(half.overlaps(YearMonth.of(2026, 1)));
  }

  @Test
  void namesAndLiterals() {
    assertEquals("events_2027_01", Months.partitionName("events", YearMonth.of(2027, 1)));
    LocalDate d = LocalDate.of(2027, 1, 1);
    assertEquals("'2027-01-01'", Months.ColumnType.DATE.literal(d));
    assertEquals("'2027-01-01 00:00:00'", Months.ColumnType.TIMESTAMP.literal(d));
    assertEquals("'2027-01-01 00:00:00+00'", Months.ColumnType.TIMESTAMPTZ.literal(d));
    assertEquals(Months.ColumnType.TIMESTAMPTZ,
        Months.ColumnType.of("timestamp(3) with time zone"));
    assertNull(Months.ColumnType.of("bigint"));
  }
}
