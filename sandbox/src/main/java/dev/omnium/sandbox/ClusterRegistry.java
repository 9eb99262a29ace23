package dev.omnium.sandbox;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The clusters open in this JVM: closed by a shutdown hook when the JVM exits, and listed by
 * {@link PgClusterLogsOnFailure} when a test fails.
 */
final class ClusterRegistry {

  private static final Set<PgCluster> OPEN = new LinkedHashSet<>();
  private static boolean hookInstalled;

  private ClusterRegistry() {}

  static synchronized void register(PgCluster cluster) {
    if (!hookInstalled) {
      Runtime.getRuntime().addShutdownHook(new Thread(ClusterRegistry::closeAll,
          "omnium-sandbox-shutdown"));
      hookInstalled = true;
    }
    OPEN.add(cluster);
  }

  static synchronized void unregister(PgCluster cluster) {
    OPEN.remove(cluster);
  }

  static synchronized List<PgCluster> open() {
    return new ArrayList<>(OPEN);
  }

  private static void closeAll() {
    for (PgCluster c : open()) {
      try {
        c.close();
      } catch (RuntimeException e) {
        System.err.println("[omnium-sandbox] could not close " + c + ": " + e);
      }
    }
  }
}
