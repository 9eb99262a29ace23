package dev.omnium.jdbc;

import java.time.Duration;

/**
 * Told when a replica's effective lag has stayed above {@code lagAlertThreshold} for
 * {@code lagAlertAfter} (once), and when it is back under the threshold (once). Called on the
 * replica's lag-watcher thread: return quickly. Register with
 * {@link OmniumDataSource#addLagAlertListener(LagAlertListener)} or
 * {@link OmniumDriver#addLagAlertListener(LagAlertListener)}. A {@link RuntimeException} a
 * listener throws is logged (one WARN line) and does not stop the other listeners.
 */
public interface LagAlertListener {
  /**
   * The alert fired for {@code replica}: called once, until it clears.
   *
   * @param replica the replica as {@code host:port}
   * @param lag its effective lag now, or null when unknown (unreachable, no heartbeat)
   * @param over how long it has been over the threshold
   */
  void alertRaised(String replica, Duration lag, Duration over);

  /**
   * The alert that fired for {@code replica} cleared: its effective lag is back under
   * {@code lagAlertThreshold}. Called once per {@link #alertRaised}.
   *
   * @param replica the replica as {@code host:port}
   * @param lag its effective lag now
   */
  void alertCleared(String replica, Duration lag);
}
