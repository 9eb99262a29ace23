package dev.omnium.jdbc;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The credentials a router's physical connects use: those of the latest configuration that
 * connected through it, so rotated passwords (IAM tokens, Vault leases) reach every new session of
 * every route while existing sessions live on. The connectors of a router are registered here.
 */
final class RouterCredentials {
  private record Tracked(Route route, PgConnector connector) { }

  private final List<Tracked> connectors = new CopyOnWriteArrayList<>();
  private volatile Object current;

  RouterCredentials(OmniumConfig config) {
    this.current = config.secretsKey();
  }

  PgConnector track(Route route, PgConnector connector) {
    connectors.add(new Tracked(route, connector));
    return connector;
  }

  /** Router close: see {@link PgConnector#closing()}. */
  void closing() {
    for (Tracked t : connectors) t.connector().closing();
  }

  /** Router close, once its pools have shut down: see {@link PgConnector#closeUnpooled()}. */
  void closeUnpooled() {
    for (Tracked t : connectors) t.connector().closeUnpooled();
  }

  /** Makes {@code latest}'s credentials those of every new physical connection; cheap if equal. */
  void use(OmniumConfig latest) {
    Object key = latest.secretsKey();
    if (key.equals(current)) return;
    synchronized (this) {
      for (Tracked t : connectors) {
        Map<String, String> secrets = latest.secrets(t.route());
        t.connector().useSecrets(secrets);
      }
      current = key;
    }
  }
}
