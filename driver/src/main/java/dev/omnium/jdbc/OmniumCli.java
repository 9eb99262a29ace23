package dev.omnium.jdbc;

import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java -jar omnium-jdbc.jar check|heartbeat '<jdbc:omnium: URL>'}: the driver's operational
 * commands. {@code check} prints the health report and exits 0 (healthy), 1 (degraded) or 2
 * (primary unreachable); {@code heartbeat} runs the heartbeat writer as a sidecar until
 * interrupted.
 */
final class OmniumCli {
  private OmniumCli() { }

  public static void main(String[] args) throws Exception {
    if (!dependenciesVisible()) {
      System.exit(relaunchWithLib(args));
    }
    System.exit(run(args, System.out, System.err));
  }

  private static boolean dependenciesVisible() {
    try {
      Class.forName("org.postgresql.Driver", false, OmniumCli.class.getClassLoader());
      Class.forName("com.zaxxer.hikari.HikariDataSource", false, OmniumCli.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  /**
   * {@code java -jar omnium-jdbc.jar}: the jar carries no Class-Path, so load this class again in a
   * loader that also sees the jars in {@code lib/} beside it (what the build copies there).
   */
  private static int relaunchWithLib(String[] args) throws Exception {
    Path jar = Path.of(OmniumCli.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path lib = jar.resolveSibling("lib");
    List<URL> urls = new ArrayList<>();
    urls.add(jar.toUri().toURL());
    if (Files.isDirectory(lib)) {
      try (var jars = Files.list(lib)) {
        for (Path p : (Iterable<Path>) jars.sorted()::iterator) {
          if (p.toString().endsWith(".jar")) urls.add(p.toUri().toURL());
        }
      }
    }
    ClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]),
        ClassLoader.getPlatformClassLoader());
    Class<?> cli = Class.forName(OmniumCli.class.getName(), true, loader);
    if (cli.getClassLoader() != loader) {
      System.err.println("omnium: cannot find pgjdbc and HikariCP: put them on the class path or"
          + " in " + lib);
      return 2;
    }
    Thread.currentThread().setContextClassLoader(loader);
    var run = cli.getDeclaredMethod("run", String[].class, PrintStream.class, PrintStream.class);
    run.setAccessible(true);
    return (Integer) run.invoke(null, args, System.out, System.err);
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length < 2 || !(args[0].equals("check") || args[0].equals("heartbeat"))) {
      err.println("usage: java -jar omnium-jdbc.jar check '<jdbc:omnium:postgresql://…>' [--json]");
      err.println("       java -jar omnium-jdbc.jar heartbeat '<jdbc:omnium:postgresql://…>'");
      return 64;
    }
    String url = args[1];
    try {
      if (args[0].equals("check")) {
        boolean json = args.length > 2 && args[2].equals("--json");
        return HealthCheck.run(url, new Properties(), json, out);
      }
      return heartbeat(url, out);
    } catch (Exception e) {
      err.println("omnium: " + e.getMessage());
      return 2;
    }
  }

  private static int heartbeat(String url, PrintStream out) throws Exception {
    OmniumConfig config = OmniumConfig.of(url, new Properties());
    Properties props = config.physicalProperties(Route.HEARTBEAT);
    props.putIfAbsent("connectTimeout", "5");
    props.putIfAbsent("socketTimeout", "30");
    HeartbeatWriter writer = new HeartbeatWriter(
        new PgConnector(config.primaryUrl(), props, config.applicationName() + " heartbeat writer")
            .settingsBy(StartupSettings.of(config, Route.HEARTBEAT, config.primaryUrl())),
        config.heartbeatTable(), config.heartbeatInterval(), "omnium-heartbeat");
    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      writer.close();
      stop.countDown();
    }, "omnium-heartbeat-stop"));
    out.println("omnium: heartbeat writer for " + Secrets.maskUrl(url) + " every "
        + config.heartbeatInterval().toMillis()
        + " ms (competing for the writer lock); Ctrl-C stops it");
    writer.start();
    stop.await();
    return 0;
  }
}
