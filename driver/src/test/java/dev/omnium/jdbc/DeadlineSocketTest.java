package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The watchdog that keeps a read session's socketTimeout ({@link DeadlineSocket},
 * {@link DeadlineSockets}) against a loopback peer that answers when the test says: the same
 * bound and error as the JDK's own read timeout, other timeouts left to the kernel, and the
 * thread gone with the last socket.
 */
class DeadlineSocketTest {
  private static final int BOUND_MILLIS = 1000;
  private static final OmniumConfig CONFIG = config();

  private ServerSocket server;
  private Socket peer;
  private DeadlineSocket socket;

  @BeforeEach
  void connect() throws Exception {
    server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    socket = new DeadlineSocket(BOUND_MILLIS);
    socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
    peer = server.accept();
  }

  @AfterEach
  void close() throws Exception {
    socket.close();
    peer.close();
    server.close();
  }

  @Test
  void aReadBlockedPastTheTimeoutFailsAsTheJdksOwnTimeoutDoes() throws Exception {
    socket.setSoTimeout(BOUND_MILLIS);
    assertEquals(BOUND_MILLIS, socket.getSoTimeout(), "reports the timeout pgjdbc set");
    assertTrue(DeadlineSockets.running());
    InputStream in = socket.getInputStream();
    long start = System.nanoTime();
    SocketTimeoutException e =
        assertThrows(SocketTimeoutException.class, () -> in.read(new byte[16], 0, 16));
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertEquals("Read timed out", e.getMessage());
    assertTrue(millis >= BOUND_MILLIS, "timed out after " + millis + " ms, before the bound");
    assertTrue(millis < 30_000, "timed out only after " + millis + " ms");
    assertTrue(socket.isClosed(), "the timed-out socket is closed");
    // and the peer sees the connection end, as a server does when pgjdbc gives up
    peer.setSoTimeout(10_000);
    assertEquals(-1, peer.getInputStream().read());
  }

  @Test
  void eachReadHasItsOwnBoundAsWithTheJdk() throws Exception {
    socket.setSoTimeout(BOUND_MILLIS);
    InputStream in = socket.getInputStream();
    OutputStream out = peer.getOutputStream();
    long start = System.nanoTime();
    for (int n = 0; n < 6; n++) {
      int i = n;
      Thread writer = new Thread(() -> {
        try {
          Thread.sleep(BOUND_MILLIS / 4);
          out.write(i0(i));
          out.flush();
        } catch (Exception ignored) {
          // the read below fails then
        }
      });
      writer.start();
      assertEquals(i0(i), in.read());
      writer.join();
    }
    assertTrue(System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(BOUND_MILLIS),
        "the reads together took longer than one bound");
    assertFalse(socket.isClosed());
  }

  private static OmniumConfig config() {
    try {
      return OmniumConfig.of("jdbc:omnium:postgresql://primary/db?replica=replica&user=u", null);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int i0(int i) {
    return 'a' + i;
  }

  @Test
  void anyOtherTimeoutIsTheKernelsAndLeavesTheSocketOpen() throws Exception {
    socket.setSoTimeout(BOUND_MILLIS);
    socket.setSoTimeout(50); // pgjdbc's hasMessagePending sets 1 ms, an application its own
    assertEquals(50, socket.getSoTimeout());
    InputStream in = socket.getInputStream();
    assertThrows(SocketTimeoutException.class, () -> in.read(new byte[4], 0, 4));
    assertFalse(socket.isClosed(), "a kernel timeout leaves the socket open, as with pgjdbc");
    socket.setSoTimeout(0);
    assertEquals(0, socket.getSoTimeout());
    socket.setSoTimeout(BOUND_MILLIS);
    assertEquals(BOUND_MILLIS, socket.getSoTimeout());
    peer.getOutputStream().write(7);
    assertEquals(7, in.read());
  }

  @Test
  void theWatchdogEndsWithTheLastSocket() throws Exception {
    socket.setSoTimeout(BOUND_MILLIS);
    assertTrue(DeadlineSockets.watched() >= 1);
    socket.close();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (DeadlineSockets.running() || DeadlineSockets.watched() > 0) {
      if (System.nanoTime() > deadline) fail("the watchdog still runs with no socket open");
      Thread.sleep(10);
    }
  }

  @Test
  void theFactoryWatchesTheConnectionsSocketTimeout() throws Exception {
    Properties p = new Properties();
    p.setProperty("socketTimeout", "7");
    Socket s = new DeadlineSockets.Factory(p).createSocket();
    assertInstanceOf(DeadlineSocket.class, s);
    assertEquals(7_000_000_000L, ((DeadlineSocket) s).watchedNanos);
    Socket plain = new DeadlineSockets.Factory(new Properties()).createSocket();
    assertSame(Socket.class, plain.getClass(),
        "no socketTimeout: a plain socket");
    p.setProperty("socketTimeout", "x");
    assertSame(Socket.class, new DeadlineSockets.Factory(p).createSocket().getClass());
  }

  @Test
  void pgjdbcCanLoadTheFactoryByName() {
    assertTrue(DeadlineSockets.usable());
    Properties p = ClientTimeouts.apply(CONFIG, Route.REPLICA, new Properties());
    assertEquals(DeadlineSockets.Factory.class.getName(), p.getProperty("socketFactory"));
    p = ClientTimeouts.apply(CONFIG, Route.FALLBACK, new Properties());
    assertEquals(DeadlineSockets.Factory.class.getName(), p.getProperty("socketFactory"));
    p = ClientTimeouts.apply(CONFIG, Route.PRIMARY, new Properties());
    assertEquals(null, p.getProperty("socketFactory"),
        "the application's sessions keep pgjdbc's timeout");
    Properties own = new Properties();
    own.setProperty("socketFactory", "com.example.Mine");
    assertEquals("com.example.Mine",
        ClientTimeouts.apply(CONFIG, Route.REPLICA, own).getProperty("socketFactory"));
  }
}
