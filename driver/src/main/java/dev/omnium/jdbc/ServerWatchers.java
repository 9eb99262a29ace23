package dev.omnium.jdbc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The servers one replica address reaches, each with a lag watcher of its own: freshness is
 * known per server, not per address. One address may reach several servers (a reader endpoint:
 * HAProxy over Patroni's replicas, a Kubernetes {@code -ro} Service, a cloud reader endpoint),
 * a different one from one new session to the next.
 *
 * <p>The address's own watcher measures the first server anyone reached through it (its session
 * or a pooled one). Every later session that reaches another server, found by its
 * {@link ServerKey} when it opens, makes that server known and starts a watcher pinned to it:
 * its sessions connect through the address until they reach that server (a bounded number of
 * tries). A pooled read session is used only while its own server is fresh
 * ({@link ReplicaEndpoint#borrow}). Bounded: at most {@link #MAX_SERVERS} servers per address
 * (sessions of others are never used); a server whose watcher has not reached it for
 * {@link #forgetAfterNanos} is forgotten, its watcher closed.
 *
 * <p>With one server behind the address (the usual listed replica) nothing of this costs
 * anything on the hot path: {@link #several()} is one volatile read.
 */
final class ServerWatchers {
  private static final Logger log = LoggerFactory.getLogger(ServerWatchers.class);
  static final int MAX_SERVERS = 8;

  final String name;
  /** The address's watcher: the first server seen through it. */
  final LagWatcher first;
  private final Function<ServerKey, LagWatcher> newWatcher;
  private final long forgetAfterNanos;

  private ServerKey firstKey;
  private final Map<ServerKey, LagWatcher> others = new LinkedHashMap<>();
  /** When each other server was last reached, by a session or by its watcher. */
  private final Map<ServerKey, Long> lastSeen = new LinkedHashMap<>();
  /** The first watcher, then the others: read without a lock. */
  private volatile LagWatcher[] all;
  private boolean closed;
  private boolean warnedFull;
  /**
   * A read found no server behind the address fresh since the last round of the first watcher:
   * only then can a look find a server that matters (see {@link LagWatcher}'s look).
   */
  private volatile boolean noneFresh;

  /**
   * @param newWatcher a watcher (not started) for another server, named after it
   * @param forgetAfterNanos how long a server may stay unreached before it is forgotten
   */
  ServerWatchers(String name, LagWatcher first, Function<ServerKey, LagWatcher> newWatcher,
      long forgetAfterNanos) {
    this.name = name;
    this.first = first;
    this.newWatcher = newWatcher;
    this.forgetAfterNanos = forgetAfterNanos;
    this.all = new LagWatcher[] {first};
    first.measureServerOf(this);
  }

  /** Whether the address has reached more than one server. */
  boolean several() {
    return all.length > 1;
  }

  /** Every watcher, the address's first. */
  LagWatcher[] all() {
    return all;
  }

  /**
   * The watcher of the server {@code k}, started now when the server is new; null when the
   * address already reaches {@link #MAX_SERVERS} servers (a session there is never used).
   */
  synchronized LagWatcher watcherFor(ServerKey k) {
    if (firstKey == null) {
      firstKey = k;
      first.measures(k);
      return first;
    }
    if (firstKey.equals(k)) return first;
    LagWatcher w = others.get(k);
    if (w != null || closed) {
      if (w != null) lastSeen.put(k, System.nanoTime());
      return w;
    }
    if (others.size() + 1 >= MAX_SERVERS) {
      if (!warnedFull) {
        warnedFull = true;
        log.warn("omnium: replica address {} reaches more than {} servers: sessions on the others"
            + " ({} and more) are not used", name, MAX_SERVERS, k);
      }
      return null;
    }
    w = newWatcher.apply(k);
    w.measureServerOf(this);
    w.measures(k);
    others.put(k, w);
    lastSeen.put(k, System.nanoTime());
    publish();
    log.info("omnium: replica address {} reaches another server, {} (first: {}): its lag is"
        + " measured on its own, and its sessions serve reads only while it is fresh", name, k,
        firstKey);
    w.start();
    return w;
  }

  /**
   * A read wanted a fresh server here and found none (it went to another replica or the
   * fallback). Written only when not yet set: reads on that path do not contend for the line.
   */
  void noneWasFresh() {
    if (!noneFresh) noneFresh = true;
  }

  /** Whether a read found no fresh server since the last call; clears it. */
  boolean takeNoneWasFresh() {
    if (!noneFresh) return false;
    noneFresh = false;
    return true;
  }

  /** How many servers are known: a pinned watcher's connect tries scale with it. */
  int known() {
    return all.length;
  }

  /**
   * The address's first watcher reached only {@code k} in all its tries: the address now reaches
   * that server alone (the first one is gone, or was replaced). The first watcher measures it
   * from now on; a watcher of its own, if any, is closed. Returns whether it moved.
   */
  synchronized boolean firstMovedTo(ServerKey k) {
    if (closed || k.equals(firstKey)) return false;
    log.info("omnium: replica address {} no longer reaches {}, only {}: its watcher measures {}",
        name, firstKey, k, k);
    ServerKey old = firstKey;
    firstKey = k;
    first.measures(k);
    LagWatcher w = others.remove(k);
    lastSeen.remove(k);
    if (old != null) lastSeen.remove(old);
    publish();
    if (w != null) w.close();
    return true;
  }

  /** Forgets servers unreached for {@link #forgetAfterNanos}; run by the first watcher's rounds. */
  void forgetUnseen(long now) {
    List<LagWatcher> gone = new ArrayList<>();
    synchronized (this) {
      others.entrySet().removeIf(e -> {
        LagWatcher w = e.getValue();
        if (w.state() == LagWatcher.State.OK) {
          lastSeen.put(e.getKey(), now);
          return false;
        }
        Long seen = lastSeen.get(e.getKey());
        if (seen != null && now - seen < forgetAfterNanos) return false;
        lastSeen.remove(e.getKey());
        gone.add(w);
        log.info("omnium: replica address {} has not reached {} for {} s: forgotten", name,
            e.getKey(), forgetAfterNanos / 1_000_000_000L);
        return true;
      });
      if (!gone.isEmpty()) publish();
    }
    for (LagWatcher w : gone) w.close();
  }

  private void publish() {
    LagWatcher[] a = new LagWatcher[others.size() + 1];
    a[0] = first;
    int i = 1;
    for (LagWatcher w : others.values()) a[i++] = w;
    all = a;
  }

  /** Stops the other servers' watchers without waiting (the first is the router's). */
  void stopOthers() {
    for (LagWatcher w : othersNow()) w.stop();
  }

  /** Closes the other servers' watchers; no server is added afterwards. */
  void closeOthers() {
    for (LagWatcher w : othersNow()) w.close();
  }

  private synchronized List<LagWatcher> othersNow() {
    closed = true;
    return new ArrayList<>(others.values());
  }
}
