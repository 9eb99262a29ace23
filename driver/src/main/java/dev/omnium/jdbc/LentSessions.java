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
 * a pool of that size does not lend, go to a concurrent set. Each thread starts at a slot of its
 * own and the slots lie a cache line pair apart, so threads on different cores do not pass one
 * line back and forth on every transaction.
 */
final class LentSessions {
  /** Array elements between two slots: 128 bytes even with 4-byte references. */
  private static final int STRIDE = 32;

  private final AtomicReferenceArray<Connection> slots;
  private final int capacity;
  private final Set<Connection> overflow = ConcurrentHashMap.newKeySet();

  /** @param capacity the pool's maximum size */
  LentSessions(int capacity) {
    this.capacity = Math.max(1, capacity);
    slots = new AtomicReferenceArray<>(this.capacity * STRIDE);
  }

  void add(Connection c) {
    int n = capacity;
    int start = home(n);
    for (int i = 0; i < n; i++) {
      int k = (start + i < n ? start + i : start + i - n) * STRIDE;
      if (slots.get(k) == null && slots.compareAndSet(k, null, c)) return;
    }
    overflow.add(c);
  }

  void remove(Connection c) {
    int n = capacity;
    int start = home(n); // where this thread's add most likely put it
    for (int i = 0; i < n; i++) {
      int k = (start + i < n ? start + i : start + i - n) * STRIDE;
      if (slots.get(k) == c && slots.compareAndSet(k, c, null)) return;
    }
    overflow.remove(c);
  }

  private static int home(int n) {
    return (int) (Thread.currentThread().getId() % n);
  }

  /** The sessions lent now (a copy). */
  List<Connection> snapshot() {
    List<Connection> all = new ArrayList<>();
    for (int k = 0; k < slots.length(); k += STRIDE) {
      Connection c = slots.get(k);
      if (c != null) all.add(c);
    }
    all.addAll(overflow);
    return all;
  }
}
