package dev.omnium.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;

/**
 * A read session's socket whose {@code socketTimeout} is kept by {@link DeadlineSockets}' thread
 * instead of the kernel. The JDK keeps a read timeout by polling with one, and on a virtual
 * machine each such poll arms and cancels a kernel timer: a few microseconds of the reading
 * thread's CPU per blocking read, more than everything omnium adds in Java. The application's
 * own pool straight to a replica reads without a timeout and pays none of it.
 *
 * <p>Only the one timeout the route configured ({@code watchedMillis}) is kept this way; any
 * other value pgjdbc or the application sets (1 ms in {@code hasMessagePending}, a
 * {@code setNetworkTimeout}, 0 while waiting for notifications) goes to the kernel as before,
 * and {@link #getSoTimeout()} always reports what was set. A read still blocked when its
 * deadline passes has the socket closed under it and fails with {@link SocketTimeoutException}
 * ("Read timed out"), which pgjdbc turns into the same 08006 as a kernel timeout. Unlike a
 * kernel timeout the socket is then closed; pgjdbc closes the connection after a timed-out
 * statement read in any case.
 */
final class DeadlineSocket extends Socket {
  private static final VarHandle READ_SINCE;

  static {
    try {
      READ_SINCE = MethodHandles.lookup()
          .findVarHandle(DeadlineSocket.class, "readSince", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The timeout kept by the watchdog, in milliseconds (the route's socketTimeout); 0: none. */
  private final int watchedMillis;
  final long watchedNanos;
  /** Whether the timeout in force is {@link #watchedMillis}, kept by the watchdog. */
  private volatile boolean watched;
  /** When the read in progress began ({@link System#nanoTime()}, never 0); 0: none. */
  @SuppressWarnings("unused") // through READ_SINCE
  private volatile long readSince;
  private volatile boolean expired;
  private InputStream input;

  DeadlineSocket(int watchedMillis) {
    this.watchedMillis = watchedMillis;
    this.watchedNanos = watchedMillis * 1_000_000L;
  }

  @Override
  public synchronized void setSoTimeout(int timeout) throws SocketException {
    if (timeout > 0 && timeout == watchedMillis) {
      super.setSoTimeout(0);
      watched = true;
      DeadlineSockets.watch(this);
    } else {
      super.setSoTimeout(timeout);
      watched = false;
    }
  }

  @Override
  public synchronized int getSoTimeout() throws SocketException {
    return watched ? watchedMillis : super.getSoTimeout();
  }

  @Override
  public synchronized InputStream getInputStream() throws IOException {
    if (input == null) input = new Watched(super.getInputStream());
    return input;
  }

  @Override
  public synchronized void close() throws IOException {
    DeadlineSockets.forget(this);
    super.close();
  }

  /**
   * The watchdog's check at {@code now}: closes the socket when its read in progress has passed
   * its deadline.
   *
   * @return nanoseconds until this socket's next deadline could pass
   */
  long expireIfDue(long now) {
    long since = (long) READ_SINCE.getAcquire(this);
    if (since == 0 || !watched) return watchedNanos;
    long left = watchedNanos - (now - since);
    if (left > 0) return left;
    // Only the read that began at `since`: one that ended meanwhile set 0 and is left alone.
    if (READ_SINCE.compareAndSet(this, since, 0L)) {
      expired = true;
      try {
        close();
      } catch (IOException ignored) {
        // the blocked read fails either way
      }
    }
    return watchedNanos;
  }

  /** The socket's stream: marks each read while the watchdog keeps the timeout. */
  private final class Watched extends InputStream {
    private final InputStream in;
    private final byte[] one = new byte[1]; // read(): one reader at a time, as on any socket

    Watched(InputStream in) {
      this.in = in;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (!watched) return in.read(b, off, len);
      long now = System.nanoTime();
      READ_SINCE.setRelease(DeadlineSocket.this, now == 0 ? 1 : now);
      try {
        return in.read(b, off, len);
      } catch (IOException e) {
        throw expired ? timedOut(e) : e;
      } finally {
        READ_SINCE.setRelease(DeadlineSocket.this, 0L);
      }
    }

    @Override
    public int read() throws IOException {
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int available() throws IOException {
      return in.available();
    }

    @Override
    public void close() throws IOException {
      in.close();
    }

    private IOException timedOut(IOException cause) {
      SocketTimeoutException e = new SocketTimeoutException("Read timed out");
      e.initCause(cause);
      return e;
    }
  }
}
