package dev.omnium.jdbc;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The sessions a replica pool has lent, so that a black-holed replica's in-flight reads can be
 * cut loose. A borrow and its return take a slot of a fixed array (one compare-and-set each, no
 * allocation: a concurrent set would allocate a node per borrow); more sessions than slots, which
 * a pool of that size does not lend, go to a concurrent set.
 */
final class LentSessions {
  private final AtomicReferenceArray<Connection> slots;
  private final Set<Connection> overflow = ConcurrentHashMap.newKeySet();

  /** @param capacity the pool's maximum size */
  LentSessions(int capacity) {
    slots = new AtomicReferenceArray<>(Math.max(1, capacity));
  }

  void add(Connection c) {
    int n = slots.length();
    // each thread starts at its own slot, so concurrent borrowers rarely meet on one
    int start = (int) (Thread.currentThread().getId() % n);
    for (int i = 0; i < n; i++) {
      int k = start + i < n ? start + i : start + i - n;
      if (slots.get(k) == null && slots.compareAndSet(k, null, c)) return;
    }
    overflow.add(c);
  }

  void remove(Connection c) {
    int n = slots.length();
    for (int k = 0; k < n; k++) {
      if (slots.get(k) == c && slots.compareAndSet(k, c, null)) return;
    }
    overflow.remove(c);
  }

  /** The sessions lent now (a copy). */
  List<Connection> snapshot() {
    List<Connection> all = new ArrayList<>();
    for (int k = 0; k < slots.length(); k++) {
      Connection c = slots.get(k);
      if (c != null) all.add(c);
    }
    all.addAll(overflow);
    return all;
  }
}
