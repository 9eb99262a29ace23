package dev.omnium.it;

import dev.omnium.jdbc.OmniumDataSource;
import java.io.IOException;

/**
 * A separate application process for {@link HeartbeatFreezeIT}: starts a data source with
 * {@code heartbeatWriter=true} (its URL is the only argument), reports whether it leads, and runs
 * until its standard input closes.
 */
public final class HeartbeatLeaderMain {
  private HeartbeatLeaderMain() { }

  public static void main(String[] args) throws Exception {
    try (OmniumDataSource ds = new OmniumDataSource(args[0])) {
      ds.metrics(); // starts the router and with it the writer
      System.out.println("STARTED");
      System.out.flush();
      while (System.in.read() >= 0) {
        System.out.println("leader=" + ds.metrics().isHeartbeatLeader());
        System.out.flush();
      }
    } catch (IOException closed) {
      // the test ended
    }
  }
}
