package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

  private static final String EXPECTED =
      "expected a duration such as 250ms, 5s, 2m, or plain milliseconds";

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "250ms     | 250",
      "5s        | 5000",
      "2m        | 120000",
      "1h        | 3600000",
      "1500      | 1500",
      "'  5s  '  | 5000",
      "0         | 0",
      "0ms       | 0",
      "1.5s      | 1500",
      "0.25m     | 15000",
      "1500.0    | 1500",
      "007s      | 7000",
  })
  void acceptsEveryForm(String text, long millis) throws SQLException {
    assertEquals(Duration.ofMillis(millis), Durations.parse("maxAge", text));
  }

  @Test
  void exactMessageForGarbage() {
    SQLException e = assertThrows(SQLException.class, () -> Durations.parse("maxAge", "5x"));
    assertEquals("Invalid value for maxAge: \"5x\" (" + EXPECTED + ")", e.getMessage());
    assertEquals("08001", e.getSQLState());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "   ", "-5s", "-1", "5x", "5 s", "s", "ms", "1.5.2s", "1.5xs",
      "5S", "5sec", "+5s", "1e3", "PT5S", "5s5", ".5s", "5.s", "1,5s"})
  void rejectsMalformed(String text) {
    SQLException e = assertThrows(SQLException.class, () -> Durations.parse("heartbeatInterval",
        text));
    assertTrue(e.getMessage().startsWith("Invalid value for heartbeatInterval: "), e.getMessage());
    assertTrue(e.getMessage().contains(EXPECTED), e.getMessage());
    assertEquals("08001", e.getSQLState());
  }

  @Test
  void rejectsNull() {
    SQLException e = assertThrows(SQLException.class, () -> Durations.parse("maxAge", null));
    assertEquals("Invalid value for maxAge: \"\" (empty; " + EXPECTED + ")", e.getMessage());
  }

  @Test
  void negativeSaysSo() {
    SQLException e = assertThrows(SQLException.class, () -> Durations.parse("maxAge", "-5s"));
    assertEquals("Invalid value for maxAge: \"-5s\" (must not be negative; " + EXPECTED + ")",
        e.getMessage());
  }

  @Test
  void rejectsFinerThanAMillisecond() {
    SQLException e = assertThrows(SQLException.class, () -> Durations.parse("maxAge", "1.0005s"));
    assertTrue(e.getMessage().contains("finer than a millisecond"), e.getMessage());
    assertThrows(SQLException.class, () -> Durations.parse("maxAge", "0.5ms"));
    assertThrows(SQLException.class, () -> Durations.parse("maxAge", "1.5"));
  }

  @Test
  void rejectsOverflow() throws SQLException {
    assertEquals(Duration.ofMillis(Long.MAX_VALUE),
        Durations.parse("maxAge", Long.toString(Long.MAX_VALUE)));
    for (String text : new String[] {"9223372036854775808", "99999999999999999999h",
        "2562047788016h"}) {
      SQLException e = assertThrows(SQLException.class, () -> Durations.parse("maxAge", text));
      assertTrue(e.getMessage().contains("too large"), e.getMessage());
      assertEquals("08001", e.getSQLState());
    }
  }

  @Test
  void formatIsExactAndParsesBack() throws SQLException {
    assertEquals("5000ms", Durations.format(Duration.ofSeconds(5)));
    assertEquals("0ms", Durations.format(Duration.ZERO));
    assertEquals("1800000ms", Durations.format(Duration.ofMinutes(30)));
    Duration d = Duration.ofMillis(123_456);
    assertEquals(d, Durations.parse("x", Durations.format(d)));
  }
}
