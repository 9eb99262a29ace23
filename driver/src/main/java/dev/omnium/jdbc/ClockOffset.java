package dev.omnium.jdbc;

import java.time.Instant;
import java.util.Locale;

/**
 * NTP-style estimate of one server's wall-clock offset from this client's: for a query sent at
 * client time {@code t0}, answered at {@code t3}, that read the server's
 * {@code clock_timestamp()} {@code ts}, the offset is {@code ts - (t0 + t3) / 2} within
 * {@code ±(t3 - t0) / 2}. Of the last few samples the one with the shortest round trip wins (the
 * NTP clock filter). Only reported (JMX, {@code check}): routing never uses a server's clock.
 */
final class ClockOffset {
  /** Samples the filter chooses from. */
  static final int WINDOW = 8;

  private final long[] offsetMicros = new long[WINDOW];
  private final long[] roundTripMicros = new long[WINDOW];
  private int next;
  private int size;

  /** The client's wall clock in microseconds since the epoch. */
  static long nowMicros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
  }

  /**
   * @param sentMicros client wall clock just before the query was sent
   * @param receivedMicros client wall clock just after its answer arrived
   * @param serverEpochSeconds the server's {@code extract(epoch FROM clock_timestamp())}
   */
  synchronized void record(long sentMicros, long receivedMicros, double serverEpochSeconds) {
    if (Double.isNaN(serverEpochSeconds) || receivedMicros < sentMicros) return;
    long server = Math.round(serverEpochSeconds * 1e6);
    offsetMicros[next] = server - (sentMicros + (receivedMicros - sentMicros) / 2);
    roundTripMicros[next] = receivedMicros - sentMicros;
    next = (next + 1) % WINDOW;
    if (size < WINDOW) size++;
  }

  synchronized boolean known() {
    return size > 0;
  }

  /** Server clock minus client clock in microseconds (positive: server ahead); 0 when unknown. */
  synchronized long offsetMicros() {
    int best = best();
    return best < 0 ? 0 : offsetMicros[best];
  }

  /** Half the chosen sample's round trip: the estimate is within this; -1 when unknown. */
  synchronized long uncertaintyMicros() {
    int best = best();
    return best < 0 ? -1 : roundTripMicros[best] / 2;
  }

  private int best() {
    int best = -1;
    for (int i = 0; i < size; i++) {
      if (best < 0 || roundTripMicros[i] < roundTripMicros[best]) best = i;
    }
    return best;
  }

  @Override
  public synchronized String toString() {
    return known() ? String.format(Locale.ROOT, "%+.3fs ±%.3fs", offsetMicros() / 1e6,
        uncertaintyMicros() / 1e6) : "unknown";
  }
}
