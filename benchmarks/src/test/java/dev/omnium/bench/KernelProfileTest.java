package dev.omnium.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How {@link KernelProfile} charges one perf sample: to a contender, a category and a stack. */
class KernelProfileTest {
  private static final String KERNEL = "[kernel.kallsyms]";
  private static final String JIT = "/tmp/perf-4242.map";
  private static final String POLL = "int sun.nio.ch.Net.poll(java.io.FileDescriptor, int, long)";
  private static final String SOCKET_READ = "int java.net.Socket$SocketInputStream.read(byte[], int, int)";
  private static final String WATCHED = "int dev.omnium.jdbc.DeadlineSocket$Watched.read(byte[], int, int)";
  private static final String PROCESS = "void org.postgresql.core.v3.QueryExecutorImpl.processResults("
      + "org.postgresql.core.ResultHandler, int, boolean)";

  /** Frames leaf first, each {symbol, where}. */
  private static List<String[]> frames(String... symbolAndWhere) {
    List<String[]> f = new ArrayList<>();
    for (int i = 0; i < symbolAndWhere.length; i += 2) {
      f.add(new String[] {symbolAndWhere[i], symbolAndWhere[i + 1]});
    }
    return f;
  }

  @Test
  void kernelSamplesAreSortedByTheTimerTheSleepAndTheRest() {
    assertEquals(0, KernelProfile.category(frames("hrtimer_try_to_cancel", KERNEL, "do_sys_poll", KERNEL,
        "__poll", "libc.so.6")));
    assertEquals(1, KernelProfile.category(frames("finish_task_switch.isra.0", KERNEL, "__schedule", KERNEL,
        "schedule_hrtimeout_range", KERNEL)));
    assertEquals(2, KernelProfile.category(frames("tcp_sendmsg_locked", KERNEL, "sock_write_iter", KERNEL,
        "__GI___libc_write", "libc.so.6")));
    // the timer is looked for in kernel frames only
    assertEquals(2, KernelProfile.category(frames("tcp_sendmsg_locked", KERNEL, "hrtimer_like_user_symbol",
        "libc.so.6")));
  }

  @Test
  void javaSamplesAreChargedToTheLibraryOfTheirClass() {
    assertEquals(3, KernelProfile.category(frames(WATCHED, JIT)));
    assertEquals(4, KernelProfile.category(frames("void com.zaxxer.hikari.util.FastList.add(java.lang.Object)", JIT)));
    assertEquals(5, KernelProfile.category(frames(PROCESS, JIT)));
    assertEquals(6, KernelProfile.category(frames("long dev.omnium.bench.Workloads.readTx(javax.sql.DataSource, int)",
        JIT)));
    assertEquals(7, KernelProfile.category(frames(SOCKET_READ, JIT)));
    assertEquals(8, KernelProfile.category(frames("StubRoutines (1)", JIT)));
    assertEquals(8, KernelProfile.category(frames("Interpreter", JIT)));
    assertEquals(8, KernelProfile.category(frames("G1BarrierSet::write_ref", "/usr/lib/jvm/lib/server/libjvm.so")));
    assertEquals(9, KernelProfile.category(frames("__GI___libc_write", "/usr/lib/x86_64-linux-gnu/libc.so.6")));
  }

  @Test
  void theSameSocketWorkUnderOmniumsReadMarkHasTheSameStack() {
    String plain = KernelProfile.signature(frames("__poll", "libc.so.6", POLL, JIT, SOCKET_READ, JIT, PROCESS, JIT,
        "void org.postgresql.core.v3.QueryExecutorImpl.execute()", JIT));
    String marked = KernelProfile.signature(frames("__poll", "libc.so.6", POLL, JIT, SOCKET_READ, JIT, WATCHED, JIT,
        PROCESS, JIT));
    assertEquals(plain, marked);
    assertEquals(4, marked.split(" ← ").length);
  }

  @Test
  void theReadMarkItselfSampledStaysItsOwnStack() {
    String own = KernelProfile.signature(frames(WATCHED, JIT, PROCESS, JIT));
    // symbols past 90 characters are cut with an ellipsis
    assertEquals(WATCHED + " ← " + PROCESS.substring(0, 90) + "…", own);
    assertNotEquals(KernelProfile.signature(frames(PROCESS, JIT)), own);
  }

  @Test
  void aSampleIsChargedToTheBlockRunningAtItsTimestamp() {
    List<long[]> blocks = List.of(new long[] {100, 200, 0}, new long[] {250, 300, 3}, new long[] {300, 400, 1});
    long[] starts = {100, 250, 300};
    assertEquals(-1, KernelProfile.contenderAt(99, starts, blocks), "before the first block");
    assertEquals(0, KernelProfile.contenderAt(100, starts, blocks));
    assertEquals(0, KernelProfile.contenderAt(200, starts, blocks));
    assertEquals(-1, KernelProfile.contenderAt(201, starts, blocks), "between blocks: the runner's own work");
    assertEquals(3, KernelProfile.contenderAt(299, starts, blocks));
    assertEquals(1, KernelProfile.contenderAt(300, starts, blocks), "a block starts where the last one ended");
    assertEquals(-1, KernelProfile.contenderAt(401, starts, blocks), "after the last block");
    assertEquals(-1, KernelProfile.contenderAt(-1, starts, blocks), "a sample without a time");
  }
}
