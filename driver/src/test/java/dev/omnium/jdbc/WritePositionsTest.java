package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class WritePositionsTest {
  private static final long TTL = TimeUnit.MINUTES.toNanos(10);

  @Test
  void anUnknownPositionIsReplacedByTheNextKnownOne() {
    WritePositions w = new WritePositions("thread", TTL);
    w.remember(Lsn.parse("1/10"));
    w.remember(WritePositions.UNKNOWN);
    assertEquals(WritePositions.UNKNOWN, w.requiredForThisThread(System.nanoTime()));
    w.remember(Lsn.parse("1/20"));
    assertEquals(Lsn.parse("1/20"), w.requiredForThisThread(System.nanoTime()));
  }

  @Test
  void amongKnownPositionsTheLaterWins() {
    assertEquals(Lsn.parse("2/0"), WritePositions.merge(Lsn.parse("2/0"), Lsn.parse("1/FF")));
    assertEquals(Lsn.parse("2/0"), WritePositions.merge(0, Lsn.parse("2/0")));
    assertEquals(WritePositions.UNKNOWN, WritePositions.merge(Lsn.parse("2/0"), WritePositions.UNKNOWN));
    assertEquals(Lsn.parse("1/0"), WritePositions.merge(WritePositions.UNKNOWN, Lsn.parse("1/0")));
  }

  @Test
  void tokensRoundTripIncludingTheUnknownOne() throws SQLException {
    long lsn = Lsn.parse("16/B374D848");
    assertEquals(lsn, WritePositions.parseToken(WritePositions.token(lsn)));
    assertEquals("omnium:v1:primary", WritePositions.token(WritePositions.UNKNOWN));
    assertEquals(WritePositions.UNKNOWN, WritePositions.parseToken("omnium:v1:primary"));
  }

  @Test
  void anExpiredPositionIsNoLongerRequired() {
    WritePositions w = new WritePositions("thread", 1);
    assertNull(w.lastTokenOfThisThread());
    w.remember(Lsn.parse("1/10"));
    assertEquals(0, w.requiredForThisThread(System.nanoTime() + TTL));
  }
}
