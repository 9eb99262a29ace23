package dev.omnium.it.reliability;

import dev.omnium.sandbox.PgCluster;
import dev.omnium.sandbox.PgNode;
import java.util.stream.Collectors;

/** Omnium URLs for a sandbox cluster, always carrying a password (the cluster's, or the distinctive one). */
final class Urls {
  private Urls() { }

  static String password(PgCluster cluster) {
    return cluster.password() != null ? cluster.password() : SecretScan.PASSWORD;
  }

  /** Primary and every replica of the cluster. */
  static String of(PgCluster cluster, String app, String extra) {
    String replicas = cluster.replicas().stream().map(PgNode::hostPort).collect(Collectors.joining(","));
    return base(cluster, app) + (replicas.isEmpty() ? "" : "&replica=" + replicas)
        + (extra == null || extra.isEmpty() ? "" : "&" + extra);
  }

  /** Primary only: the caller adds replica=… itself (or none). */
  static String base(PgCluster cluster, String app) {
    return "jdbc:omnium:postgresql://" + cluster.primary().hostPort() + "/" + cluster.database()
        + "?applicationName=" + app + "&user=" + cluster.user() + "&password=" + password(cluster);
  }
}
