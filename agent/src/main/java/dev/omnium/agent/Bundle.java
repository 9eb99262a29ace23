package dev.omnium.agent;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.Properties;

/**
 * One copy of the relocated driver, defined in a {@link BundleLoader} whose parent is the class
 * loader of one {@code org.postgresql.Driver}. Reached through method handles looked up once, so no
 * agent class links against bundle classes.
 */
final class Bundle {
  static final String SUPPORT = "dev.omnium.agent.bundle.jdbc.AgentSupport";

  private final ClassLoader loader;
  private final MethodHandle connect;
  private final MethodHandle validate;

  private Bundle(ClassLoader loader, Class<?> support) throws ReflectiveOperationException {
    this.loader = loader;
    MethodHandles.Lookup lookup = MethodHandles.publicLookup();
    this.connect = lookup.findStatic(support, "connect",
        MethodType.methodType(Object.class, String.class, Properties.class, String.class));
    this.validate = lookup.findStatic(support, "validate",
        MethodType.methodType(String.class, String.class, Map.class));
  }

  /** The system class loader's bundle, shared by the start-up check and the connects. */
  private static Bundle forSystemLoader;

  /**
   * The bundle for {@code parent}: shared for the system class loader (the usual home of pgjdbc,
   * and where the start-up check runs), else a new one (callers cache it per pgjdbc class).
   */
  static Bundle forLoader(ClassLoader parent) throws ReflectiveOperationException {
    if (parent != ClassLoader.getSystemClassLoader()) {
      return create(parent);
    }
    synchronized (Bundle.class) {
      if (forSystemLoader == null) {
        forSystemLoader = create(parent);
      }
      return forSystemLoader;
    }
  }

  /** A bundle whose driver links to the pgjdbc visible from {@code parent}. */
  private static Bundle create(ClassLoader parent) throws ReflectiveOperationException {
    BundleLoader loader = new BundleLoader(parent);
    return new Bundle(loader, Class.forName(SUPPORT, true, loader));
  }

  /**
   * The omnium connection for this connect, or the {@link java.sql.SQLException} pgjdbc's own
   * connect would have thrown (the login failed): the application gets it as it is.
   */
  Object connect(String url, Properties info, String agentQuery) throws Throwable {
    return (Object) connect.invokeExact(url, info, agentQuery);
  }

  /** Null when the keys are fine, else the driver's message. */
  String validate(AgentArgs args) throws Throwable {
    return (String) validate.invokeExact(args.query(), args.keys);
  }

  ClassLoader loader() {
    return loader;
  }
}
