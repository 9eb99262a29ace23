package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WritePositionsTest {
  private static final long TTL = TimeUnit.MINUTES.toNanos(10);
  private static final long MS = 1_000_000L;

  private final WalTimeline timeline = new WalTimeline(64);
  private final AtomicInteger requests = new AtomicInteger();

  private WritePositions positions(String mode, long ttl) {
    return new WritePositions(mode, ttl, timeline, requests::incrementAndGet, 50 * MS);
  }

  @Test
  void aCommitIsReadOnThePrimaryUntilASampleSentAfterItDatesIt() {
    WritePositions w = positions("thread", TTL);
    long before = System.nanoTime();
    timeline.add(before, Lsn.parse("1/10")); // sent before the commit: does not cover it
    w.committed(System.nanoTime());
    assertEquals(0, requests.get(), "a commit asks for no sample");
    assertEquals(WritePositions.UNKNOWN, w.requiredForThisThread(System.nanoTime()));
    assertEquals(1, requests.get(), "the read that needs the commit dated asks for a sample");
    timeline.add(System.nanoTime(), Lsn.parse("1/20"));
    timeline.add(System.nanoTime(), Lsn.parse("1/30"));
    assertEquals(Lsn.parse("1/20"), w.requiredForThisThread(System.nanoTime()),
        "the first sample sent after the commit");
    assertEquals(Lsn.parse("1/20"), w.requiredForThisThread(System.nanoTime()), "kept");
  }

  @Test
  void aThreadThatOnlyWritesNeverAsksTheSamplerForMore() {
    WritePositions w = positions("thread", TTL);
    for (int i = 0; i < 1000; i++) w.committed(System.nanoTime());
    assertEquals(0, requests.get());
    timeline.add(System.nanoTime(), Lsn.parse("5/0")); // the scheduled sample dates them all
    assertEquals(Lsn.parse("5/0"), w.requiredForThisThread(System.nanoTime()));
    assertEquals(0, requests.get(), "a read of a dated commit asks for nothing");
  }

  @Test
  void aLaterCommitReplacesTheDatedOne() {
    WritePositions w = positions("thread", TTL);
    w.committed(System.nanoTime());
    timeline.add(System.nanoTime(), Lsn.parse("2/0"));
    assertEquals(Lsn.parse("2/0"), w.requiredForThisThread(System.nanoTime()));
    w.committed(System.nanoTime());
    assertEquals(WritePositions.UNKNOWN, w.requiredForThisThread(System.nanoTime()));
    timeline.add(System.nanoTime(), Lsn.parse("2/8"));
    assertEquals(Lsn.parse("2/8"), w.requiredForThisThread(System.nanoTime()));
  }

  @Test
  void tokenModeRequiresNothingOfTheThreadButItsTokenWaitsForTheSample() throws Exception {
    WritePositions w = positions("token", TTL);
    w.committed(System.nanoTime());
    assertEquals(0, requests.get(), "token mode asks only when a token is wanted");
    assertEquals(0, w.requiredForThisThread(System.nanoTime()));
    Thread sampler = new Thread(() -> {
      while (requests.get() == 0) Thread.onSpinWait();
      timeline.add(System.nanoTime(), Lsn.parse("3/40"));
    });
    sampler.start();
    WritePositions slow = new WritePositions("token", TTL, timeline, requests::incrementAndGet,
        TimeUnit.MINUTES.toNanos(1));
    slow.committed(System.nanoTime());
    assertEquals("omnium:v1:3/40", slow.lastTokenOfThisThread());
    sampler.join();
  }

  @Test
  void aTokenWithoutASampleInTimeSendsItsReadsToThePrimary() {
    WritePositions w = positions("token", TTL);
    w.committed(System.nanoTime());
    assertEquals("omnium:v1:primary", w.lastTokenOfThisThread());
    assertTrue(requests.get() > 0);
    timeline.add(System.nanoTime(), Lsn.parse("4/0"));
    assertEquals("omnium:v1:4/0", w.lastTokenOfThisThread(), "dated once a sample came");
  }

  @Test
  void withoutReplicasNoPositionIsKnown() {
    WritePositions w = new WritePositions("thread", TTL, null, null, MS);
    w.committed(System.nanoTime());
    assertEquals(WritePositions.UNKNOWN, w.requiredForThisThread(System.nanoTime()));
  }

  @Test
  void amongKnownPositionsTheLaterWins() {
    assertEquals(Lsn.parse("2/0"), WritePositions.merge(Lsn.parse("2/0"), Lsn.parse("1/FF")));
    assertEquals(Lsn.parse("2/0"), WritePositions.merge(0, Lsn.parse("2/0")));
    assertEquals(WritePositions.UNKNOWN,
        WritePositions.merge(Lsn.parse("2/0"), WritePositions.UNKNOWN));
    assertEquals(Lsn.parse("1/0"), WritePositions.merge(WritePositions.UNKNOWN, Lsn.parse("1/0")));
  }

  @Test
  void tokensRoundTripIncludingTheUnknownOne() throws SQLException {
    long lsn = Lsn.parse("16/B374D848");
    assertEquals(lsn, WritePositions.parseToken(WritePositions.token(lsn)));
    assertEquals("omnium:v1:primary", WritePositions.token(WritePositions.UNKNOWN));
    assertEquals(WritePositions.UNKNOWN, WritePositions.parseToken("omnium:v1:primary"));
  }

  /** As the Javadoc of requireWriteToken says: 22023, whatever is wrong with it. */
  @Test
  void aMalformedTokenFails22023() {
    for (String bad : new String[] {"nonsense", "omnium:v1:", "omnium:v1:zz/1", "omnium:v2:0/1",
        "omnium:v1:1"}) {
      SQLException e = assertThrows(SQLException.class, () -> WritePositions.parseToken(bad),
          bad);
      assertEquals("22023", e.getSQLState(), bad);
    }
  }

  @Test
  void anExpiredPositionIsNoLongerRequired() {
    WritePositions w = positions("thread", 1);
    assertNull(w.lastTokenOfThisThread());
    w.committed(System.nanoTime());
    assertEquals(0, w.requiredForThisThread(System.nanoTime() + TTL));
  }

  @Test
  void askingWhetherAConnectionRemembersAWriteNeverWaitsForItsSample() {
    WritePositions w = new WritePositions("thread", TTL, timeline, requests::incrementAndGet,
        TimeUnit.HOURS.toNanos(1)); // a token would wait an hour: no sample ever comes here
    ConnectionWrites c = new ConnectionWrites(w);
    assertFalse(c.remembersAny());
    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      c.committed();
      assertTrue(c.remembersAny());
    });
  }
}
