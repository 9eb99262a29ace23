package dev.omnium.sandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * An HAProxy (the system's, {@code /usr/sbin/haproxy}; Debian's package) balancing TCP
 * connections round robin over some nodes of a {@link PgCluster}: one address that reaches
 * several servers, as a reader endpoint (a Kubernetes Service, Patroni's HAProxy, a cloud reader
 * endpoint) does. Started by {@link PgCluster#startHaProxy}.
 */
public final class HaProxy extends Sidecar {
  /** Where Debian's package installs it; {@code OMNIUM_HAPROXY} names another. */
  static final String DEFAULT_BINARY = "/usr/sbin/haproxy";

  private final List<PgNode> servers;

  HaProxy(String name, Path dir, ServerUser runAs, List<PgNode> servers) {
    super(name, dir, runAs);
    if (servers.isEmpty()) throw new IllegalArgumentException("an HAProxy needs a server");
    this.servers = List.copyOf(servers);
  }

  /** @return the binary the sandbox runs */
  public static String binary() {
    return binary("OMNIUM_HAPROXY", DEFAULT_BINARY);
  }

  /** @return whether {@link #binary()} exists and is executable */
  public static boolean available() {
    return Files.isExecutable(Path.of(binary()));
  }

  @Override
  String configSuffix() {
    return "cfg";
  }

  @Override
  String configText(int port) {
    StringBuilder b = new StringBuilder("# omnium sandbox: one address, round robin\n");
    b.append("global\n  maxconn 1000\n");
    b.append("defaults\n  mode tcp\n  timeout connect 5s\n");
    // database sessions idle for long: a client or server timeout would cut them
    b.append("  timeout client 1h\n  timeout server 1h\n");
    b.append("listen readers\n  bind 127.0.0.1:").append(port).append('\n');
    b.append("  balance roundrobin\n");
    for (PgNode n : servers) {
      b.append("  server ").append(n.name()).append(' ').append(n.hostPort()).append('\n');
    }
    return b.toString();
  }

  @Override
  List<String> command(Path config) {
    // -db: in the foreground, no daemon; its messages go to the log file
    return List.of(binary(), "-db", "-f", config.toString());
  }

  /** @return the nodes it balances over, in order */
  public List<PgNode> servers() {
    return servers;
  }

  @Override
  public String toString() {
    return super.toString() + "[round robin over " + servers + "]";
  }
}
