package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.sql.SQLWarning;
import org.junit.jupiter.api.Test;

class WarningsTest {
  static int length(SQLWarning w) {
    int n = 0;
    for (SQLWarning x = w; x != null; x = x.getNextWarning()) {
      if (++n > 100) throw new AssertionError("the chain loops");
    }
    return n;
  }

  @Test
  void twoSessionsWarningsChainWithoutACycleHoweverOftenTheyAreAskedFor() {
    SQLWarning primary = new SQLWarning("p1");
    primary.setNextWarning(new SQLWarning("p2"));
    SQLWarning read = new SQLWarning("r1");
    for (int i = 0; i < 3; i++) {
      assertEquals(3, length(Warnings.chain(primary, read)));
    }
    assertEquals(2, length(primary), "the sessions' own chains are left alone");
    assertEquals(1, length(read));
  }

  @Test
  void oneSessionsChainIsReturnedAsItIs() {
    SQLWarning w = new SQLWarning("only");
    assertSame(w, Warnings.chain(w, null));
    assertSame(w, Warnings.chain(null, w));
    assertNull(Warnings.chain(null, null));
  }
}
