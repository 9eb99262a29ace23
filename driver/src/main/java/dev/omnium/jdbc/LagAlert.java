package dev.omnium.jdbc;

import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replica's lag alert: fires once when effective lag stays above the threshold for the
 * configured time, clears once when it is back under. Evaluated by the watcher thread after
 * every probe, so it costs the routing path nothing.
 */
final class LagAlert {
  private static final Logger log = LoggerFactory.getLogger(LagAlert.class);

  private final String replica;
  private final long thresholdNanos;
  private final long afterNanos;
  private final List<LagAlertListener> listeners;
  private long overSinceNanos;
  private boolean overSeen;
  private volatile boolean firing;

  LagAlert(String replica, Duration threshold, Duration after, List<LagAlertListener> listeners) {
    this.replica = replica;
    this.thresholdNanos = threshold.toNanos();
    this.afterNanos = after.toNanos();
    this.listeners = listeners;
  }

  boolean isFiring() {
    return firing;
  }

  /** @param lagNanos effective lag, {@link Long#MAX_VALUE} when unknown */
  void evaluate(long nowNanos, long lagNanos) {
    if (lagNanos > thresholdNanos) {
      if (!overSeen) {
        overSeen = true;
        overSinceNanos = nowNanos;
      }
      long over = nowNanos - overSinceNanos;
      if (!firing && over >= afterNanos) {
        Duration lag = lagNanos == Long.MAX_VALUE ? null : Duration.ofNanos(lagNanos);
        log.error("omnium: LAG ALERT replica {}: effective lag {} has been over {} ms for {} ms",
            replica, lag == null ? "unknown" : lag.toMillis() + " ms", thresholdNanos / 1_000_000,
                over / 1_000_000);
        for (LagAlertListener l : listeners) {
          try {
            l.alertRaised(replica, lag, Duration.ofNanos(over));
          } catch (RuntimeException e) {
            log.warn("omnium: lag alert listener {} failed: {}", l, e.toString());
          }
        }
        // set after the listeners ran: whoever sees the flag also sees what they did
        firing = true;
      }
    } else {
      overSeen = false;
      if (firing) {
        log.info("omnium: lag alert cleared for replica {}: effective lag {} ms", replica,
            lagNanos / 1_000_000);
        for (LagAlertListener l : listeners) {
          try {
            l.alertCleared(replica, Duration.ofNanos(lagNanos));
          } catch (RuntimeException e) {
            log.warn("omnium: lag alert listener {} failed: {}", l, e.toString());
          }
        }
        firing = false;
      }
    }
  }
}
