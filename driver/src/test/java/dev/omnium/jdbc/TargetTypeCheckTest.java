package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.Date;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.util.PSQLException;

/** One row per (value class, target type) pair pgjdbc 42.7's setObject converts at the setter. */
class TargetTypeCheckTest {
  static Stream<Arguments> pairs() {
    return Stream.of(
        // value, target type, expected SQLState (null: accepted at the setter)
        Arguments.of(1, Types.INTEGER, null),
        Arguments.of("12", Types.INTEGER, null),
        Arguments.of("abc", Types.INTEGER, "07006"),
        Arguments.of("99999999999", Types.INTEGER, "07006"),
        Arguments.of('7', Types.INTEGER, null),
        Arguments.of('x', Types.INTEGER, "07006"),
        Arguments.of(true, Types.INTEGER, null),
        Arguments.of(new Date(0), Types.INTEGER, null),
        Arguments.of(UUID.randomUUID(), Types.INTEGER, "07006"),
        Arguments.of("70000", Types.SMALLINT, "07006"),
        Arguments.of("12", Types.TINYINT, null),
        Arguments.of(1L, Types.BIGINT, null),
        Arguments.of("1.5", Types.BIGINT, "07006"),
        Arguments.of("1.5", Types.REAL, null),
        Arguments.of("x", Types.REAL, "07006"),
        Arguments.of("1e3", Types.DOUBLE, null),
        Arguments.of("x", Types.FLOAT, "07006"),
        Arguments.of(new BigDecimal("1.5"), Types.NUMERIC, null),
        Arguments.of(BigInteger.TEN, Types.DECIMAL, null),
        Arguments.of(2.5d, Types.NUMERIC, null),
        Arguments.of(Double.NaN, Types.NUMERIC, "07006"),
        Arguments.of("1.25", Types.NUMERIC, null),
        Arguments.of("abc", Types.NUMERIC, "07006"),
        Arguments.of('5', Types.DECIMAL, null),
        Arguments.of(new AtomicInteger(1), Types.NUMERIC, "07006"),
        Arguments.of(true, Types.BOOLEAN, null),
        Arguments.of(" Yes ", Types.BOOLEAN, null),
        Arguments.of("maybe", Types.BIT, "42846"),
        Arguments.of('T', Types.BIT, null),
        Arguments.of('x', Types.BOOLEAN, "42846"),
        Arguments.of(0, Types.BOOLEAN, null),
        Arguments.of(2, Types.BOOLEAN, "42846"),
        Arguments.of(new Date(0), Types.BOOLEAN, "42846"),
        Arguments.of(OffsetDateTime.now(), Types.TIMESTAMP_WITH_TIMEZONE, null),
        Arguments.of(LocalDateTime.now(), Types.TIMESTAMP_WITH_TIMEZONE, "07006"),
        Arguments.of(new ByteArrayInputStream(new byte[1]), Types.BLOB, null),
        Arguments.of(new byte[1], Types.BLOB, "07006"),
        Arguments.of("text", Types.CLOB, "07006"),
        // left to pgjdbc at execute: need the session, or never fail at the setter
        Arguments.of("abc", Types.TIMESTAMP, null),
        Arguments.of(new Timestamp(0), Types.DATE, null),
        Arguments.of("abc", Types.VARCHAR, null),
        Arguments.of("abc", Types.OTHER, null),
        Arguments.of(null, Types.INTEGER, null));
  }

  @ParameterizedTest
  @MethodSource("pairs")
  void checksAsPgjdbcSetObject(Object value, int type, String state) throws SQLException {
    if (state == null) {
      TargetTypeCheck.check(value, type);
    } else {
      PSQLException e = assertThrows(PSQLException.class, () -> TargetTypeCheck.check(value, type));
      assertEquals(state, e.getSQLState());
    }
  }
}
