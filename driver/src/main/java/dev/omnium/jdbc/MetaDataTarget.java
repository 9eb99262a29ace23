package dev.omnium.jdbc;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.DatabaseMetaData;

/**
 * The physical {@link DatabaseMetaData} behind a {@link MetaDataProxy}, resolved at each call
 * from the logical connection's current session, so a metadata object kept by the application
 * never runs its queries on a session that went back to a pool (and to another thread). A
 * reflective proxy is fine here: metadata is off the hot path. {@code getURL()} answers the
 * {@code jdbc:omnium:} URL with any password masked.
 */
final class MetaDataTarget implements InvocationHandler {
  /** The proxy class's constructor, found once (newProxyInstance looks it up per call). */
  private static final Constructor<?> PROXY;

  static {
    try {
      PROXY = Proxy.newProxyInstance(MetaDataTarget.class.getClassLoader(),
          new Class<?>[] {DatabaseMetaData.class}, (p, m, a) -> null)
          .getClass().getConstructor(InvocationHandler.class);
    } catch (NoSuchMethodException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final OmniumConnection connection;

  private MetaDataTarget(OmniumConnection connection) {
    this.connection = connection;
  }

  static DatabaseMetaData of(OmniumConnection connection) {
    try {
      return (DatabaseMetaData) PROXY.newInstance(new MetaDataTarget(connection));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
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
   * given; else (a data source's connection) its configuration's, made once per configuration.
   */
  private String url() {
    String url = connection.url();
    return url != null ? url : connection.router().config.maskedUrl();
  }
}
