package dev.omnium.jdbc;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import javax.net.SocketFactory;

/**
 * Keeps the {@code socketTimeout} of read sessions ({@link DeadlineSocket}) with one daemon
 * thread, {@code omnium-read-deadlines}, so that their reads block without a kernel timer. The
 * thread sleeps until the earliest moment a deadline could pass, closes the socket of a read
 * that passed it, and ends when no such socket is open; the next one starts it again.
 *
 * <p>pgjdbc creates the sockets through {@link Factory}, named in its {@code socketFactory}
 * property by {@link ClientTimeouts} for the replica and fallback routes. Sessions on the
 * primary route keep pgjdbc's own timeout: they belong to the application, which may wait for
 * notifications on them, and there a timed-out read must leave the session open as it does with
 * pgjdbc.
 */
final class DeadlineSockets {
  private static final Set<DeadlineSocket> SOCKETS = ConcurrentHashMap.newKeySet();
  private static Thread thread; // guarded by DeadlineSockets.class

  private DeadlineSockets() { }

  /**
   * Whether pgjdbc can load {@link Factory} by its name (it cannot when it sits in a parent
   * class loader).
   */
  static boolean usable() {
    return Visible.FACTORY;
  }

  static void watch(DeadlineSocket s) {
    // A socket watched before is in the thread's sleep already (it never sleeps past a bound):
    // pgjdbc restores the timeout after every probe and validation, which needs no wake-up.
    if (!SOCKETS.add(s)) return;
    Thread t;
    synchronized (DeadlineSockets.class) {
      if (thread == null) {
        thread = new Thread(DeadlineSockets::run, "omnium-read-deadlines");
        thread.setDaemon(true);
        thread.start();
        return;
      }
      t = thread;
    }
    LockSupport.unpark(t); // its sleep may be longer than this socket's timeout
  }

  static void forget(DeadlineSocket s) {
    if (!SOCKETS.remove(s) || !SOCKETS.isEmpty()) return;
    Thread t;
    synchronized (DeadlineSockets.class) {
      t = thread;
    }
    // it sees no socket left and ends now, not at its next deadline
    if (t != null) LockSupport.unpark(t);
  }

  /** Sockets being watched (for tests). */
  static int watched() {
    return SOCKETS.size();
  }

  /** Whether the watchdog thread runs (for tests). */
  static synchronized boolean running() {
    return thread != null;
  }

  private static void run() {
    while (true) {
      long now = System.nanoTime();
      long sleep = Long.MAX_VALUE;
      for (DeadlineSocket s : SOCKETS) sleep = Math.min(sleep, s.expireIfDue(now));
      synchronized (DeadlineSockets.class) {
        if (SOCKETS.isEmpty()) {
          thread = null;
          return;
        }
      }
      LockSupport.parkNanos(DeadlineSockets.class, sleep);
    }
  }

  /** Loaded on first use: whether pgjdbc's class loader finds this factory by its name. */
  private static final class Visible {
    static final boolean FACTORY = resolves();

    private static boolean resolves() {
      try {
        return Class.forName(Factory.class.getName(), false,
            org.postgresql.Driver.class.getClassLoader()) == Factory.class;
      } catch (ClassNotFoundException | LinkageError e) {
        return false;
      }
    }
  }

  /**
   * pgjdbc's {@code socketFactory} for read sessions: every socket keeps the connection's
   * {@code socketTimeout} through the watchdog. Public only because pgjdbc instantiates it by
   * name with its connection properties; applications do not use it.
   */
  public static final class Factory extends SocketFactory {
    private final int watchedMillis;

    /**
     * @param info the connection's properties, as pgjdbc passes them
     */
    public Factory(Properties info) {
      int seconds;
      try {
        seconds = Integer.parseInt(info.getProperty("socketTimeout", "0").trim());
      } catch (NumberFormatException e) {
        seconds = 0; // pgjdbc reports the bad value itself
      }
      this.watchedMillis = seconds > 0 && seconds <= Integer.MAX_VALUE / 1000 ? seconds * 1000 : 0;
    }

    @Override
    public Socket createSocket() {
      return watchedMillis > 0 ? new DeadlineSocket(watchedMillis) : new Socket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
      return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
        throws IOException {
      return connected(new InetSocketAddress(host, port),
          new InetSocketAddress(localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
      return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress,
        int localPort) throws IOException {
      return connected(new InetSocketAddress(address, port),
          new InetSocketAddress(localAddress, localPort));
    }

    /** A new socket, bound to {@code local} unless null, connected to {@code to}. */
    private Socket connected(InetSocketAddress to, InetSocketAddress local) throws IOException {
      Socket s = createSocket();
      if (local != null) s.bind(local);
      s.connect(to);
      return s;
    }
  }
}
