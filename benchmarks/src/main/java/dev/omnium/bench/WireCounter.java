package dev.omnium.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP pass-through in front of one PostgreSQL server that counts the server's round trips: its
 * {@code ReadyForQuery} ('Z') messages, exactly one per simple query and per extended-protocol
 * {@code Sync}, the server's own end of each request. (Counting when the client waits instead
 * would depend on timing: pgjdbc pipelines a {@code BEGIN} before the first query without waiting,
 * and whether its bytes arrive in one or two pieces varies from run to run.)
 *
 * <p>Counts are kept per {@code application_name} taken from each session's startup packet, so the
 * harness can leave omnium's background sessions ({@code bench:watcher}, {@code bench:sampler}) out of a contender's total. Used only
 * by {@link RoundTrips}, never in a timed benchmark.
 */
public final class WireCounter implements AutoCloseable {
  private static final int SSL_REQUEST = 80877103;
  private static final int GSSENC_REQUEST = 80877104;
  private static final int CANCEL_REQUEST = 80877102;

  private final int targetPort;
  private final ServerSocket listener;
  private final Map<String, AtomicLong> readyForQuery = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> sessions = new ConcurrentHashMap<>();
  private final CopyOnWriteArrayList<Socket> sockets = new CopyOnWriteArrayList<>();
  private final Thread acceptor;
  private volatile boolean closed;

  public WireCounter(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::acceptLoop, "wire-counter-" + targetPort);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** {@code 127.0.0.1:port} of the proxy, to put in a JDBC URL instead of the server's. */
  public String hostPort() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  /** Round trips (ReadyForQuery messages) so far, per application_name. */
  public Map<String, Long> roundTrips() {
    Map<String, Long> m = new TreeMap<>();
    readyForQuery.forEach((k, v) -> m.put(k, v.get()));
    return m;
  }

  /** Sessions opened so far, per application_name. */
  public Map<String, Long> sessions() {
    Map<String, Long> m = new TreeMap<>();
    sessions.forEach((k, v) -> m.put(k, v.get()));
    return m;
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        Thread t = new Thread(() -> serve(client), "wire-counter-session");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        if (!closed) System.err.println("wire counter: accept failed: " + e);
      }
    }
  }

  private void serve(Socket client) {
    try (Socket c = client; Socket server = new Socket()) {
      sockets.add(c);
      sockets.add(server);
      c.setTcpNoDelay(true);
      server.setTcpNoDelay(true);
      server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5000);
      DataInputStream fromClient = new DataInputStream(c.getInputStream());
      OutputStream toServer = server.getOutputStream();
      InputStream fromServer = new BufferedInputStream(server.getInputStream(), 16384);
      OutputStream toClient = new BufferedOutputStream(c.getOutputStream(), 16384);
      String app;
      while (true) { // untyped start-up messages, until the StartupMessage itself
        int len = fromClient.readInt();
        byte[] body = new byte[len - 4];
        fromClient.readFully(body);
        int code = ((body[0] & 0xff) << 24) | ((body[1] & 0xff) << 16) | ((body[2] & 0xff) << 8) | (body[3] & 0xff);
        writeInt(toServer, len);
        toServer.write(body);
        toServer.flush();
        if (code == SSL_REQUEST || code == GSSENC_REQUEST) {
          int answer = fromServer.read(); // 'N': not supported by the sandbox, go on in clear text
          if (answer < 0) return;
          toClient.write(answer);
          toClient.flush();
          if (answer != 'N') throw new IOException("the wire counter cannot follow an encrypted session");
          continue;
        }
        if (code == CANCEL_REQUEST) {
          app = "(cancel)";
        } else {
          app = applicationName(body);
        }
        break;
      }
      sessions.computeIfAbsent(app, k -> new AtomicLong()).incrementAndGet();
      AtomicLong counter = readyForQuery.computeIfAbsent(app, k -> new AtomicLong());
      Thread up = new Thread(() -> pump(fromClient, toServer), "wire-counter-up");
      up.setDaemon(true);
      up.start();
      countServerMessages(new DataInputStream(fromServer), toClient, counter);
    } catch (EOFException e) {
      // session ended
    } catch (IOException e) {
      if (!closed) {
        // a session the client or server closed abruptly: nothing to count
      }
    }
  }

  private static void countServerMessages(DataInputStream in, OutputStream out, AtomicLong counter) throws IOException {
    byte[] buf = new byte[8192];
    while (true) {
      int type = in.read();
      if (type < 0) return;
      int len = in.readInt();
      out.write(type);
      writeInt(out, len);
      int remaining = len - 4;
      while (remaining > 0) {
        int n = in.read(buf, 0, Math.min(buf.length, remaining));
        if (n < 0) throw new EOFException();
        out.write(buf, 0, n);
        remaining -= n;
      }
      if (type == 'Z') {
        counter.incrementAndGet();
        out.flush();
      } else if (in.available() == 0) {
        out.flush();
      }
    }
  }

  private static void pump(InputStream in, OutputStream out) {
    byte[] buf = new byte[8192];
    try {
      int n;
      while ((n = in.read(buf)) >= 0) {
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // session ended
    } finally {
      try {
        out.close();
      } catch (IOException ignored) {
        // closing
      }
    }
  }

  /** The application_name parameter of a StartupMessage body (protocol version, then name/value pairs). */
  private static String applicationName(byte[] body) {
    int i = 4;
    String key = null;
    while (i < body.length) {
      int end = i;
      while (end < body.length && body[end] != 0) end++;
      String s = new String(body, i, end - i, StandardCharsets.UTF_8);
      i = end + 1;
      if (s.isEmpty() && key == null) break;
      if (key == null) {
        key = s;
      } else {
        if (key.equals("application_name")) return s;
        key = null;
      }
    }
    return "(not in startup packet)";
  }

  private static void writeInt(OutputStream out, int v) throws IOException {
    out.write(v >>> 24);
    out.write(v >>> 16);
    out.write(v >>> 8);
    out.write(v);
  }

  @Override
  public void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException ignored) {
      // closing
    }
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing
      }
    }
  }
}
