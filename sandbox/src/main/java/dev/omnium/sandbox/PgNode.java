package dev.omnium.sandbox;

import java.nio.file.Path;

/**
 * One PostgreSQL server of a {@link PgCluster}: the primary or a streaming replica. A value object
 * with the node's address; control it through its cluster ({@link PgCluster#stop}, {@link
 * PgCluster#freeze}, ...).
 */
public final class PgNode {

  private static final String HOST = "127.0.0.1";

  private final String name;
  private final String database;
  private final Path logFile;
  private final boolean primary;
  private volatile int port;

  PgNode(String name, String database, Path logFile, boolean primary) {
    this.name = name;
    this.database = database;
    this.logFile = logFile;
    this.primary = primary;
  }

  /**
   * @return "primary", "replica1", "replica2", ... (also the replica's application_name on the
   * primary)
   */
  public String name() {
    return name;
  }

  /** @return always "127.0.0.1": the servers listen on the loopback interface only */
  public String host() {
    return HOST;
  }

  /** @return the TCP port, fixed for the life of the cluster (also across stop/start) */
  public int port() {
    return port;
  }

  /** @return e.g. "127.0.0.1:5433" */
  public String hostPort() {
    return HOST + ":" + port;
  }

  /** @return e.g. "jdbc:postgresql://127.0.0.1:5433/omnium" */
  public String jdbcUrl() {
    return "jdbc:postgresql://" + hostPort() + "/" + database;
  }

  /** @return the server log (pg_ctl -l); it is deleted with the cluster */
  public Path logFile() {
    return logFile;
  }

  /** @return true for the primary, false for a replica */
  public boolean isPrimary() {
    return primary;
  }

  void port(int port) {
    this.port = port;
  }

  @Override
  public String toString() {
    return name + "@" + hostPort();
  }
}
