package dev.omnium.jdbc;

import java.io.InputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.Date;
import org.postgresql.util.PGTimestamp;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * The conversions pgjdbc 42.7's {@code setObject(index, value, targetSqlType[, scale])} makes
 * eagerly from the value alone (its {@code castTo*} helpers, {@code BooleanTypeUtil} and the
 * BLOB/CLOB/TIMESTAMP_WITH_TIMEZONE class checks), made here at the setter so a value pgjdbc
 * refuses there is refused there too, with pgjdbc's SQLState, and is not recorded. Conversions
 * that need the session (dates and times from strings, arrays) or read the value (a Clob) stay
 * with pgjdbc's statement at execute. A value already of a convertible class costs only
 * {@code instanceof} tests.
 */
final class TargetTypeCheck {
  private TargetTypeCheck() { }

  /**
   * @param value the value given to setObject (null is set as a null by pgjdbc: not checked)
   * @param targetSqlType the {@link Types} value given
   * @throws PSQLException as pgjdbc's setter: 07006 for a value it cannot convert, 42846 for a
   *     value it cannot cast to boolean
   */
  static void check(Object value, int targetSqlType) throws PSQLException {
    if (value == null) return;
    switch (targetSqlType) {
      case Types.INTEGER -> number(value, "int");
      case Types.TINYINT, Types.SMALLINT -> number(value, "short");
      case Types.BIGINT -> number(value, "long");
      case Types.REAL -> number(value, "float");
      case Types.DOUBLE, Types.FLOAT -> number(value, "double");
      case Types.DECIMAL, Types.NUMERIC -> decimal(value);
      case Types.BOOLEAN, Types.BIT -> bool(value);
      case Types.TIMESTAMP_WITH_TIMEZONE -> {
        if (!(value instanceof OffsetDateTime) && !(value instanceof PGTimestamp)) {
          throw cannotCast(value, "Types.TIMESTAMP_WITH_TIMEZONE");
        }
      }
      case Types.BLOB -> {
        if (!(value instanceof Blob) && !(value instanceof InputStream)) {
          throw cannotCast(value, "Types.BLOB");
        }
      }
      case Types.CLOB -> {
        if (!(value instanceof Clob)) throw cannotCast(value, "Types.CLOB");
      }
      default -> { }
    }
  }

  /** pgjdbc's castToInt/Short/Long/Float/Double: {@code to} is its name for the target. */
  private static void number(Object value, String to) throws PSQLException {
    if (value instanceof Number || value instanceof Date || value instanceof Boolean
        || value instanceof Clob) {
      return;
    }
    if (!(value instanceof String) && !(value instanceof Character)) {
      throw cannotConvert(value, to, null);
    }
    String s = value.toString();
    try {
      switch (to) {
        case "int" -> Integer.parseInt(s);
        case "short" -> Short.parseShort(s);
        case "long" -> Long.parseLong(s);
        case "float" -> Float.parseFloat(s);
        default -> Double.parseDouble(s);
      }
    } catch (NumberFormatException e) {
      throw cannotConvert(value, to, e);
    }
  }

  /** pgjdbc's castToBigDecimal (a scale only rounds, which cannot fail). */
  private static void decimal(Object value) throws PSQLException {
    if (value instanceof BigDecimal || value instanceof BigInteger || value instanceof Long
        || value instanceof Integer || value instanceof Short || value instanceof Byte
        || value instanceof Date || value instanceof Boolean || value instanceof Clob) {
      return;
    }
    try {
      if (value instanceof Double || value instanceof Float) {
        BigDecimal.valueOf(((Number) value).doubleValue());
      } else if (value instanceof String) {
        new BigDecimal((String) value);
      } else if (value instanceof Character) {
        new BigDecimal(new char[] {(Character) value});
      } else {
        throw cannotConvert(value, "BigDecimal", null);
      }
    } catch (NumberFormatException e) {
      throw cannotConvert(value, "BigDecimal", e);
    }
  }

  /** pgjdbc's BooleanTypeUtil.castToBoolean. */
  private static void bool(Object value) throws PSQLException {
    if (value instanceof Boolean) return;
    boolean ok;
    if (value instanceof String) {
      String v = ((String) value).trim();
      ok = "1".equals(v) || "0".equals(v) || isAny(v, "true", "t", "yes", "y", "on", "false", "f",
          "no", "n", "off");
    } else if (value instanceof Character) {
      ok = "1tTyY0fFnN".indexOf((Character) value) >= 0;
    } else if (value instanceof Number) {
      double d = ((Number) value).doubleValue();
      ok = d == 1.0d || d == 0.0d;
    } else {
      throw new PSQLException("Cannot cast to boolean", PSQLState.CANNOT_COERCE);
    }
    if (!ok) {
      throw new PSQLException("Cannot cast to boolean: \"" + value + "\"",
          PSQLState.CANNOT_COERCE);
    }
  }

  private static boolean isAny(String v, String... words) {
    for (String w : words) {
      if (w.equalsIgnoreCase(v)) return true;
    }
    return false;
  }

  private static PSQLException cannotConvert(Object value, String to, Exception cause) {
    return new PSQLException("Cannot convert an instance of " + value.getClass().getName()
        + " to type " + to, PSQLState.INVALID_PARAMETER_TYPE, cause);
  }

  private static PSQLException cannotCast(Object value, String to) {
    return new PSQLException("Cannot cast an instance of " + value.getClass().getName()
        + " to type " + to, PSQLState.INVALID_PARAMETER_TYPE);
  }
}
