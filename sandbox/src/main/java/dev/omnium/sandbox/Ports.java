package dev.omnium.sandbox;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks free TCP ports on 127.0.0.1, below the kernel's ephemeral range when possible: a node keeps
 * its port across stop/start, and while it is down an outgoing connection could otherwise be given
 * that port as its local port and block the restart.
 */
final class Ports {

  private static final int LOWEST = 10_000;
  /**
   * Ports handed out recently by this JVM, so that two nodes starting together never get the same.
   */
  private static final Set<Integer> RECENT = Collections.synchronizedSet(new LinkedHashSet<>());

  private Ports() {}

  /**
   * A port that was free a moment ago. Someone may take it before the server binds it, which is
   * why the first start of a node retries with a fresh port on "address in use".
   */
  static int free() {
    int ephemeralLow = ephemeralRangeStart();
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = ephemeralLow - LOWEST > 1000
          ? ThreadLocalRandom.current().nextInt(LOWEST, ephemeralLow)
          : kernelPick();
      if (remember(port) && bindable(port)) {
        return port;
      }
    }
    throw new PgSandboxException("cannot find a free TCP port on 127.0.0.1");
  }

  private static boolean remember(int port) {
    synchronized (RECENT) {
      if (!RECENT.add(port)) {
        return false;
      }
      if (RECENT.size() > 1024) {
        RECENT.remove(RECENT.iterator().next());
      }
      return true;
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static int kernelPick() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new PgSandboxException("cannot find a free TCP port on 127.0.0.1: " + e, e);
    }
  }

  /** First port of net.ipv4.ip_local_port_range (32768 on most Linux systems). */
  private static int ephemeralRangeStart() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      return Integer.parseInt(range.split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 32768;
    }
  }
}
