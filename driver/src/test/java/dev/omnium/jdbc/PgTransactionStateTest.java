package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * {@link PgTransactionState} reads a pgjdbc internal. This fails when pgjdbc changes what it
 * relies on, so an upgrade is noticed here, not in production.
 */
class PgTransactionStateTest {
  @Test
  void pgjdbcStillExposesTheTransactionStateTheAdapterReads() throws Exception {
    Method m = BaseConnection.class.getMethod("getTransactionState");
    assertEquals(TransactionState.class, m.getReturnType());
    Set<String> states = new TreeSet<>();
    Arrays.stream(TransactionState.values()).forEach(s -> states.add(s.name()));
    assertEquals(Set.of("IDLE", "OPEN", "FAILED"), states);
    assertNotNull(TransactionState.valueOf("IDLE"));
  }
}
