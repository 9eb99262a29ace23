package dev.omnium.agent;


import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;

/**
 * Installs the hook and, once per JVM, the transformer of {@code org.postgresql.Driver}. Only JDK
 * types here: Byte Buddy lives in {@link DriverInstrumentation}, loaded on demand.
 *
 * <p>The transformer registered with the JVM is a plain {@link ClassFileTransformer} that compares
 * the class name and returns for everything else; Byte Buddy (several hundred classes to load and
 * verify) is only initialized when a pgjdbc driver class is actually defined or retransformed, so
 * the agent costs an application's start-up next to nothing until it uses pgjdbc.
 */
final class Activation {
  static final String DRIVER = "org.postgresql.Driver";
  private static final String DRIVER_INTERNAL = "org/postgresql/Driver";

  private static boolean transformerInstalled;

  private Activation() { }

  /** True when an earlier start (premain or a previous attach) already installed a hook. */
  static boolean alreadyActive() {
    return ConnectBridge.installed() != null;
  }

  /**
   * @param retransform true for a runtime attach: pgjdbc drivers already loaded are retransformed
   *     (at premain none is loaded yet)
   */
  static synchronized void activate(Instrumentation inst, AgentArgs args, boolean retransform) {
    // The hook first: a Driver class loaded while the transformer installs already routes.
    ConnectBridge.install(new ConnectHook(args));
    if (transformerInstalled) {
      return;
    }
    DriverGate gate = new DriverGate();
    inst.addTransformer(gate, true);
    transformerInstalled = true;
    if (!retransform) {
      // Build Byte Buddy's transformer while the application starts (it takes a few hundred ms of
      // class loading); a pgjdbc driver loaded earlier waits for it.
      Thread warmUp = new Thread(() -> {
        try {
          gate.byteBuddy();
        } catch (Throwable t) {
          AgentLog.warn("cannot prepare the instrumentation: " + t + ". pgjdbc connections run as plain pgjdbc.");
        }
      }, "omnium-agent-init");
      warmUp.setDaemon(true);
      warmUp.start();
    }
    if (retransform) {
      List<Class<?>> loaded = new ArrayList<>();
      for (Class<?> c : inst.getAllLoadedClasses()) {
        if (DRIVER.equals(c.getName()) && inst.isModifiableClass(c)) loaded.add(c);
      }
      for (Class<?> c : loaded) {
        try {
          inst.retransformClasses(c);
        } catch (Throwable t) {
          AgentLog.warn("cannot retransform " + DRIVER + " in " + c.getClassLoader() + ": " + t
              + ". Its connections run as plain pgjdbc.");
        }
      }
    }
  }

  /** Lets only org.postgresql.Driver through to Byte Buddy, built at the first such class. */
  private static final class DriverGate implements ClassFileTransformer {
    private volatile ClassFileTransformer byteBuddy;

    @Override
    public byte[] transform(Module module, ClassLoader loader, String className, Class<?> redefined,
        ProtectionDomain domain, byte[] classFile) {
      if (!DRIVER_INTERNAL.equals(className)) {
        return null;
      }
      try {
        return byteBuddy().transform(module, loader, className, redefined, domain, classFile);
      } catch (Throwable t) {
        AgentLog.warn("cannot instrument " + DRIVER + " in " + loader + ": " + t
            + ". Its connections run as plain pgjdbc.");
        return null;
      }
    }

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined,
        ProtectionDomain domain, byte[] classFile) {
      return transform(null, loader, className, redefined, domain, classFile);
    }

    ClassFileTransformer byteBuddy() {
      ClassFileTransformer t = byteBuddy;
      if (t == null) {
        synchronized (this) {
          t = byteBuddy;
          if (t == null) {
            byteBuddy = t = DriverInstrumentation.build();
          }
        }
      }
      return t;
    }
  }
}
