package dev.omnium.jdbc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The servers {@code check} finds behind one replica address: an address may reach several (a
 * reader endpoint: HAProxy over Patroni's replicas, a Kubernetes {@code -ro} Service, a cloud
 * reader endpoint), a different one from one session to the next, and each may have a lag of
 * its own. The check opens sessions through the address until a server it reached already comes
 * back {@value #REPEATS} times, at most {@value #MAX_CONNECTS} sessions, and checks each distinct
 * server ({@link ServerKey}) on the session that first reached it; the other sessions close at
 * once. Bounded, so not exhaustive: a balancer that favours one server may hide another, and the
 * report says how many servers it found in how many connects.
 */
final class CheckEndpoint {
  static final int MAX_CONNECTS = ServerWatchers.MAX_SERVERS;
  static final int REPEATS = 2;

  private CheckEndpoint() {
  }

  /**
   * Opens {@code first} and its siblings; returns every distinct server reached, {@code first}
   * first, each with its session open (none when {@code first} cannot connect: its error is
   * set). Behind an address reaching several servers, each is named {@code address/server}
   * ({@code replica1}, {@code replica1.2}, …).
   */
  static List<HealthServer> discover(HealthServer first) {
    List<HealthServer> found = new ArrayList<>();
    found.add(first);
    if (!first.open()) {
      return found;
    }
    first.connectsTried = 1;
    first.serversBehind = 1;
    if (first.server == null) {
      return found; // which server is unknown: the address is checked as one server
    }
    Map<ServerKey, HealthServer> byServer = new LinkedHashMap<>();
    byServer.put(first.server, first);
    int repeats = 0;
    while (first.connectsTried < MAX_CONNECTS && repeats < REPEATS) {
      HealthServer s = first.sibling();
      first.connectsTried++;
      if (!s.open() || s.server == null) {
        s.close(); // the address failed now: what was found stands
        break;
      }
      if (byServer.putIfAbsent(s.server, s) != null) {
        repeats++;
        s.close();
      }
    }
    found = new ArrayList<>(byServer.values());
    first.serversBehind = found.size();
    if (found.size() > 1) {
      for (int i = 0; i < found.size(); i++) {
        HealthServer s = found.get(i);
        s.label = first.label + (i == 0 ? "" : "." + (i + 1));
        s.endpoint = s.address + "/" + s.server.label;
      }
    }
    return found;
  }
}
