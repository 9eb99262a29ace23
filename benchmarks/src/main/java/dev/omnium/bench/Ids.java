package dev.omnium.bench;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.ThreadParams;

/** Per-thread primary keys, drawn before the trial so the measured loop allocates nothing. */
@State(Scope.Thread)
public class Ids {
  private static final int MASK = 4095;
  private int[] ids;
  private int next;

  @Setup(Level.Trial)
  public void draw(ThreadParams thread) {
    ids = Workloads.ids(0x5eed + thread.getThreadIndex(), MASK + 1);
  }

  public int next() {
    return ids[next++ & MASK];
  }
}
