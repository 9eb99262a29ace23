package dev.omnium.agent;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.security.cert.Certificate;
import java.util.Collections;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Defines the agent's bundle (the relocated omnium driver, HikariCP, slf4j-api and the agent's
 * logger) next to one copy of pgjdbc. Child-first for the bundle's own package
 * {@value #CLASS_PREFIX}, whose class files live in the agent jar under {@value #HIDDEN_ROOT} as
 * {@code .classdata} (invisible to the system class loader); parent-first for everything else, and
 * the parent is the class loader that defined {@code org.postgresql.Driver}, so the driver links to
 * the application's own pgjdbc, whatever loader that is (system, Spring Boot's
 * {@code LaunchedClassLoader}, a web application's).
 */
final class BundleLoader extends ClassLoader {
  static final String CLASS_PREFIX = "dev.omnium.agent.bundle.";
  static final String HIDDEN_ROOT = "omnium-hidden/";
  private static final String SERVICES = "META-INF/services/" + CLASS_PREFIX;

  static {
    registerAsParallelCapable();
  }

  /** Where the hidden class files are read from: the loader that loaded the agent. */
  private final ClassLoader agentLoader;
  private final ProtectionDomain domain;

  BundleLoader(ClassLoader parent) {
    super("omnium-agent", parent);
    this.agentLoader = BundleLoader.class.getClassLoader();
    CodeSource agentCode = BundleLoader.class.getProtectionDomain().getCodeSource();
    this.domain = new ProtectionDomain(
        agentCode == null ? null : new CodeSource(agentCode.getLocation(), (Certificate[]) null), null, this, null);
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (!name.startsWith(CLASS_PREFIX)) {
      return super.loadClass(name, resolve);
    }
    synchronized (getClassLoadingLock(name)) {
      Class<?> c = findLoadedClass(name);
      if (c == null) {
        c = findClass(name);
      }
      if (resolve) {
        resolveClass(c);
      }
      return c;
    }
  }

  @Override
  protected Class<?> findClass(String name) throws ClassNotFoundException {
    if (!name.startsWith(CLASS_PREFIX)) {
      throw new ClassNotFoundException(name);
    }
    byte[] bytes;
    try {
      bytes = read(hidden(name.replace('.', '/') + ".classdata"));
    } catch (IOException e) {
      throw new ClassNotFoundException(name, e);
    }
    if (bytes == null) {
      throw new ClassNotFoundException(name + " (not in the agent jar)");
    }
    int dot = name.lastIndexOf('.');
    String pkg = name.substring(0, dot);
    if (getDefinedPackage(pkg) == null) {
      try {
        definePackage(pkg, null, null, null, null, null, null, null);
      } catch (IllegalArgumentException raced) {
        // defined concurrently
      }
    }
    return defineClass(name, bytes, 0, bytes.length, domain);
  }

  /** Only the bundle's own service files (slf4j's provider) are served, from the hidden root. */
  @Override
  protected URL findResource(String name) {
    return name.startsWith(SERVICES) ? agentLoader.getResource(hidden(name)) : null;
  }

  @Override
  protected Enumeration<URL> findResources(String name) throws IOException {
    URL url = findResource(name);
    return url == null ? Collections.emptyEnumeration() : Collections.enumeration(Collections.singletonList(url));
  }

  /**
   * An entry of the agent jar, read through one {@link JarFile} kept open for the JVM's lifetime
   * (much cheaper than a URL lookup per class); through the agent's loader when not run from a jar.
   */
  private byte[] read(String path) throws IOException {
    JarFile jar = AgentJarHolder.JAR;
    if (jar != null) {
      JarEntry entry = jar.getJarEntry(path);
      if (entry == null) return null;
      try (InputStream in = jar.getInputStream(entry)) {
        return in.readAllBytes();
      }
    }
    try (InputStream in = agentLoader.getResourceAsStream(path)) {
      return in == null ? null : in.readAllBytes();
    }
  }

  private static final class AgentJarHolder {
    static final JarFile JAR = open();

    private static JarFile open() {
      try {
        java.io.File f = Installer.agentJar();
        return f.isFile() ? new JarFile(f, false) : null;
      } catch (IOException | RuntimeException e) {
        return null;
      }
    }
  }

  static String hidden(String path) {
    return HIDDEN_ROOT + path;
  }

  @Override
  public String toString() {
    return "omnium-agent bundle (parent " + getParent() + ")";
  }
}
