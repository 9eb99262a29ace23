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
  private final Set<Connection> overflow = ConcurrentHashMap.newKeySet();

  /** @param capacity the pool's maximum size */
  LentSessions(int capacity) {
    slots = new AtomicReferenceArray<>(Math.max(1, capacity) * STRIDE);
  }

  void add(Connection c) {
    for (int i = 0, n = slots.length() / STRIDE, home = home(n); i < n; i++) {
      int k = index(home, i, n);
      if (slots.get(k) == null && slots.compareAndSet(k, null, c)) return;
    }
    overflow.add(c);
  }

  /** Looks from this thread's slot first, where its add most likely put {@code c}. */
  void remove(Connection c) {
    for (int i = 0, n = slots.length() / STRIDE, home = home(n); i < n; i++) {
      int k = index(home, i, n);
      if (slots.get(k) == c && slots.compareAndSet(k, c, null)) return;
    }
    overflow.remove(c);
  }

  private static int home(int n) {
    return (int) (Thread.currentThread().getId() % n);
  }

  /** The array index of the {@code i}-th slot of {@code n} counted from {@code home}. */
  private static int index(int home, int i, int n) {
    return (home + i < n ? home + i : home + i - n) * STRIDE;
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
