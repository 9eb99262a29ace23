package dev.omnium.sandbox;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** The text of the configuration files the sandbox writes into each data directory. */
final class PgConfig {

  /** Name of the per-node file included at the end of postgresql.conf. */
  static final String NODE_FILE = "omnium-node.conf";

  /** Settings owned by the sandbox per node; the builder may not override them. */
  static final Set<String> RESERVED = Set.of("port", "unix_socket_directories", "listen_addresses",
      "primary_conninfo", "cluster_name", "logging_collector", "hba_file", "data_directory",
      "include", "include_if_exists", "include_dir");

  private PgConfig() {}

  /** Settings shared by every node; the user's extra settings come last and win. */
  static Map<String, String> defaults() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("listen_addresses", "127.0.0.1");
    s.put("wal_level", "replica");
    s.put("max_wal_senders", "10");
    s.put("hot_standby", "on");
    // Durability is pointless for a throw-away cluster and costs a lot of time.
    s.put("fsync", "off");
    s.put("synchronous_commit", "off");
    s.put("full_page_writes", "off");
    // With synchronous_commit off, commits reach replicas only once the WAL writer flushes them.
    s.put("wal_writer_delay", "10ms");
    s.put("max_connections", "300");
    s.put("shared_buffers", "32MB");
    s.put("hot_standby_feedback", "off");
    s.put("wal_receiver_status_interval", "1s");
    // Replicas reconnect to a restarted primary within ~100 ms instead of the default 5 s.
    s.put("wal_retrieve_retry_interval", "100ms");
    // A replica that was stopped or frozen for a while can still catch up from the primary.
    s.put("wal_keep_size", "256MB");
    s.put("logging_collector", "off");
    s.put("log_line_prefix", "%m [%p] %q%a ");
    s.put("password_encryption", "scram-sha-256");
    return s;
  }

  /** Appended to postgresql.conf of the primary before it is copied to the replicas. */
  static String common(Map<String, String> settings) {
    StringBuilder b = new StringBuilder("\n# --- omnium sandbox ---\n");
    settings.forEach((k, v) -> b.append(k).append(" = ").append(quote(v)).append('\n'));
    // Last, so that port and socket directory are always the node's own.
    b.append("include '").append(NODE_FILE).append("'\n");
    return b.toString();
  }

  /** The node's own settings; primaryPort is 0 for the primary itself. */
  static String node(String clusterName, int port, String socketDir, int primaryPort,
      String applicationName, String password) {
    StringBuilder b = new StringBuilder();
    b.append("port = ").append(port).append('\n');
    b.append("unix_socket_directories = ").append(quote(socketDir)).append('\n');
    b.append("cluster_name = ").append(quote(clusterName)).append('\n');
    if (primaryPort > 0) {
      String conninfo = "host=127.0.0.1 port=" + primaryPort + " user=postgres application_name="
          + applicationName + (password == null ? "" : " password=" + password);
      b.append("primary_conninfo = ").append(quote(conninfo)).append('\n');
    }
    return b.toString();
  }

  /**
   * Trust everything local, or require SCRAM passwords over TCP (the sandbox only listens on
   * 127.0.0.1); with {@code tls}, TCP connections only over TLS ({@code hostssl}).
   */
  static String hba(boolean requirePasswords, boolean tls) {
    String m = requirePasswords ? "scram-sha-256" : "trust";
    String host = tls ? "hostssl" : "host   ";
    return "# omnium sandbox\n"
        + "local   all          all                 trust\n"
        + "local   replication  all                 trust\n"
        + host + " all          all   127.0.0.1/32  " + m + "\n"
        + host + " replication  all   127.0.0.1/32  " + m + "\n"
        + host + " all          all   ::1/128       " + m + "\n"
        + host + " replication  all   ::1/128       " + m + "\n";
  }

  static String quote(String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'";
  }
}
