package dev.omnium.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.DatabaseMetaData;
import java.util.List;

/**
 * The physical {@link DatabaseMetaData} behind a {@link MetaDataProxy}, resolved at each call
 * from the logical connection's current session, so a metadata object kept by the application
 * never runs its queries on a session that went back to a pool (and to another thread). A
 * reflective proxy is fine here: metadata is off the hot path. {@code getURL()} answers the
 * {@code jdbc:omnium:} URL with any password masked.
 */
final class MetaDataTarget implements InvocationHandler {
  private final OmniumConnection connection;

  private MetaDataTarget(OmniumConnection connection) {
    this.connection = connection;
  }

  static DatabaseMetaData of(OmniumConnection connection) {
    return (DatabaseMetaData) Proxy.newProxyInstance(MetaDataTarget.class.getClassLoader(),
        new Class<?>[] {DatabaseMetaData.class}, new MetaDataTarget(connection));
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    String name = method.getName();
    if (method.getDeclaringClass() == Object.class) {
      if (name.equals("equals")) return proxy == args[0];
      if (name.equals("hashCode")) return System.identityHashCode(proxy);
      return "MetaDataTarget[" + connection + "]";
    }
    if (name.equals("getURL") && method.getParameterCount() == 0) return url();
    DatabaseMetaData physical = connection.currentOrPrimary().getMetaData();
    try {
      return method.invoke(physical, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /**
   * The URL the connection was opened with, passwords masked, as pgjdbc answers the URL it was
   * given; else (a data source's connection) its configuration's: primaries, database, replicas.
   */
  private String url() {
    if (connection.url != null) return connection.url;
    OmniumConfig config = connection.router().config;
    StringBuilder sb = new StringBuilder("jdbc:omnium:")
        .append(config.primaryUrl().substring("jdbc:".length()));
    List<HostSpec> replicas = config.replicas();
    for (int i = 0; i < replicas.size(); i++) {
      sb.append(i == 0 ? (sb.indexOf("?") < 0 ? "?replica=" : "&replica=") : ",")
          .append(replicas.get(i));
    }
    return Secrets.maskUrl(sb.toString());
  }
}
