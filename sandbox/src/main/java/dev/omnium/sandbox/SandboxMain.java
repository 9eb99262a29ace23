package dev.omnium.sandbox;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Command line: starts a cluster, prints how to connect, and runs until Ctrl-C / SIGTERM or for a
 * given time.
 *
 * <pre>
 * java -jar omnium-sandbox.jar [--phase-seconds N]          the live demo (see {@link Demo})
 * java -jar omnium-sandbox.jar --serve [--replicas N] [--version 15|18] [--for 30s] [--passwords]
 *                              [--set name=value]... [--pgbouncer session|transaction]
 *                              [--reader-endpoint]        a cluster for your own experiments
 * </pre>
 */
public final class SandboxMain {

  private SandboxMain() {}

  /**
   * Entry point.
   *
   * @param args see the class comment
   * @throws InterruptedException when interrupted while waiting
   */
  public static void main(String[] args) throws Exception {
    if (args.length == 0 || args[0].equals("--phase-seconds") || args[0].equals("demo")) {
      demo(args);
      return;
    }
    PgCluster.Builder builder = PgCluster.builder();
    Duration runFor = null;
    PgBouncer.Mode pgbouncer = null;
    boolean readerEndpoint = false;
    try {
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        switch (a) {
          case "--replicas":
            builder.replicas(Integer.parseInt(value(args, ++i, a)));
            break;
          case "--version":
            builder.version(value(args, ++i, a));
            break;
          case "--for":
            runFor = Durations.parse(value(args, ++i, a));
            break;
          case "--serve":
            break;
          case "--passwords":
            builder.requirePasswords(true);
            break;
          case "--set":
            String kv = value(args, ++i, a);
            int eq = kv.indexOf('=');
            if (eq <= 0) {
              throw new IllegalArgumentException("--set needs name=value, got " + kv);
            }
            builder.setting(kv.substring(0, eq), kv.substring(eq + 1));
            break;
          case "--pgbouncer":
            pgbouncer = PgBouncer.Mode.valueOf(value(args, ++i, a).toUpperCase(Locale.ROOT));
            break;
          case "--reader-endpoint":
            readerEndpoint = true;
            break;
          case "-h":
          case "--help":
            usage(System.out);
            return;
          default:
            throw new IllegalArgumentException("unknown argument: " + a);
        }
      }
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      usage(System.err);
      System.exit(2);
      return;
    }

    long t0 = System.nanoTime();
    PgCluster cluster;
    List<Sidecar> sidecars = new ArrayList<>();
    try {
      cluster = builder.start();
      try {
        if (pgbouncer != null) {
          sidecars.add(cluster.startPgBouncer(cluster.primary(), pgbouncer, Map.of()));
          for (PgNode r : cluster.replicas()) {
            sidecars.add(cluster.startPgBouncer(r, pgbouncer, Map.of()));
          }
        }
        if (readerEndpoint) {
          sidecars.add(cluster.startHaProxy(cluster.replicas()));
        }
      } catch (RuntimeException e) {
        cluster.close();
        throw e;
      }
    } catch (PgSandboxException | IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.exit(1);
      return;
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    // Ctrl-C / SIGTERM: the registry's shutdown hook closes the cluster; this line follows it.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println(
        "omnium sandbox: servers stopped")));
    printBanner(cluster, sidecars, ms, runFor);
    if (runFor != null) {
      new CountDownLatch(1).await(runFor.toMillis(), TimeUnit.MILLISECONDS);
      cluster.close();
      return;
    }
    new CountDownLatch(1).await();
  }

  private static void printBanner(PgCluster cluster, List<Sidecar> sidecars, long startMillis,
      Duration runFor) {
    PrintStream out = System.out;
    out.printf("omnium sandbox: PostgreSQL %s, primary + %d replica(s), ready in %d ms%n",
        cluster.version(), cluster.replicas().size(), startMillis);
    printNode(out, cluster.primary());
    cluster.replicas().forEach(r -> printNode(out, r));
    out.println("  user:     " + cluster.user() + (cluster.password() == null
        ? " (no password: trust)" : "  password: " + cluster.password()));
    for (Sidecar s : sidecars) {
      out.printf("  %-9s %s   (log: %s)%n", s instanceof PgBouncer ? "pgbouncer:" : "haproxy:", s,
          s.logFile());
    }
    out.println("  omnium:   " + cluster.omniumUrl());
    out.println(runFor == null ? "Press Ctrl-C to stop."
        : "Stopping by itself in " + runFor.toMillis() + " ms.");
    out.flush();
  }

  private static void printNode(PrintStream out, PgNode n) {
    out.printf("  %-9s %s   (log: %s)%n", n.name() + ":", n.jdbcUrl(), n.logFile());
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args[i];
  }

  /** No arguments: the live demo (scripted phases through jdbc:omnium:). */
  private static void demo(String[] args) throws Exception {
    long phaseSeconds = 10;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--phase-seconds")) {
        phaseSeconds = Long.parseLong(value(args, ++i, args[i - 1]));
      } else if (!args[i].equals("demo")) {
        System.err.println("error: unknown argument: " + args[i]);
        usage(System.err);
        System.exit(2);
      }
    }
    // Refresh one line in place on a terminal; plain lines when piped or logged.
    boolean terminal = System.console() != null && System.getenv("TERM") != null
        && !"dumb".equals(System.getenv("TERM"));
    Demo.Summary s = new Demo(Duration.ofSeconds(phaseSeconds), System.out, terminal).run();
    System.exit(s.readErrors() + s.writeErrors() == 0 ? 0 : 1);
  }

  private static void usage(PrintStream out) {
    out.println("usage: java -jar omnium-sandbox.jar [--phase-seconds N]");
    out.println("         the live demo: a primary + replica and a mixed workload through"
        + " jdbc:omnium:");
    out.println("       java -jar omnium-sandbox.jar --serve [--replicas N] [--version 15|18]"
        + " [--for 30s|2m|500ms] [--passwords] [--set name=value]...");
    out.println("             [--pgbouncer session|transaction] [--reader-endpoint]");
    out.println("         starts a real PostgreSQL primary with N streaming replicas (default 1) on"
        + " 127.0.0.1, prints their URLs and stops them on exit; optionally a PgBouncer in front"
        + " of each node, an HAProxy round robin over the replicas");
  }
}
