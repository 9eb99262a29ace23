package dev.omnium.sandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A PgBouncer (the system's, {@code /usr/sbin/pgbouncer}; Debian's package) in front of one node
 * of a {@link PgCluster}, started by {@link PgCluster#startPgBouncer}. Its configuration is
 * PgBouncer's default except for what a test must set: where it listens, how clients
 * authenticate (trust, or SCRAM with the cluster's password), the database it serves, the pool
 * mode and the settings a test adds (say {@code ignore_startup_parameters}).
 */
public final class PgBouncer extends Sidecar {
  /** PgBouncer's {@code pool_mode}. */
  public enum Mode {
    /** A server session per client connection, for the client connection's life. */
    SESSION,
    /** A server session per transaction: the next one may run on another. */
    TRANSACTION;

    /** @return the value of {@code pool_mode} */
    public String value() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Where Debian's package installs it; {@code OMNIUM_PGBOUNCER} names another. */
  static final String DEFAULT_BINARY = "/usr/sbin/pgbouncer";
  private static final Pattern SETTING_NAME = Pattern.compile("[a-z_]+");

  private final PgNode server;
  private final Mode mode;
  private final String database;
  private final String user;
  private final String password;
  private final Map<String, String> settings;

  PgBouncer(String name, Path dir, ServerUser runAs, PgNode server, Mode mode, String database,
      String user, String password, Map<String, String> settings) {
    super(name, dir, runAs);
    this.server = server;
    this.mode = mode;
    this.database = database;
    this.user = user;
    this.password = password;
    for (String key : settings.keySet()) {
      if (!SETTING_NAME.matcher(key).matches()) {
        throw new IllegalArgumentException("not a PgBouncer setting: " + key);
      }
    }
    this.settings = new LinkedHashMap<>(settings);
    runAs.writeFile(dir.resolve(name + ".users"), "\"" + user + "\" \""
        + (password == null ? "" : password) + "\"\n");
  }

  /** @return the binary the sandbox runs, or why it cannot run one */
  public static String binary() {
    return binary("OMNIUM_PGBOUNCER", DEFAULT_BINARY);
  }

  /** @return whether {@link #binary()} exists and is executable */
  public static boolean available() {
    return Files.isExecutable(Path.of(binary()));
  }

  @Override
  String configSuffix() {
    return "ini";
  }

  @Override
  String configText(int port) {
    StringBuilder b = new StringBuilder("; omnium sandbox: PgBouncer's defaults but for these\n");
    b.append("[databases]\n");
    b.append(database).append(" = host=127.0.0.1 port=").append(server.port())
        .append(" dbname=").append(database).append('\n');
    b.append("[pgbouncer]\n");
    b.append("listen_addr = 127.0.0.1\n");
    b.append("listen_port = ").append(port).append('\n');
    // no socket in /tmp: TCP only, like the servers' own listen_addresses
    b.append("unix_socket_dir =\n");
    b.append("auth_type = ").append(password == null ? "trust" : "scram-sha-256").append('\n');
    b.append("auth_file = ").append(logFile().resolveSibling(name() + ".users")).append('\n');
    b.append("pool_mode = ").append(mode.value()).append('\n');
    settings.forEach((k, v) -> b.append(k).append(" = ").append(v).append('\n'));
    return b.toString();
  }

  @Override
  List<String> command(Path config) {
    return List.of(binary(), config.toString());
  }

  /** @return the node it forwards to */
  public PgNode server() {
    return server;
  }

  /** @return its pool mode */
  public Mode mode() {
    return mode;
  }

  /** @return the settings added to PgBouncer's defaults (beyond listen, auth, database, mode) */
  public Map<String, String> settings() {
    return Map.copyOf(settings);
  }

  /** @return e.g. "jdbc:postgresql://127.0.0.1:6432/omnium" */
  public String jdbcUrl() {
    return "jdbc:postgresql://" + hostPort() + "/" + database;
  }

  /** @return the user it admits */
  String user() {
    return user;
  }

  @Override
  public String toString() {
    return super.toString() + "[" + mode.value() + " pooling -> " + server + "]";
  }
}
