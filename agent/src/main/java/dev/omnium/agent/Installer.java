package dev.omnium.agent;

import java.io.File;
import java.io.IOException;
import java.lang.instrument.Instrumentation;

/**
 * The one start path of premain and agentmain. It never throws: whatever goes wrong is one
 * ERROR or WARN line on stderr and the application runs as without the agent. Its outcome is also
 * left in the system property {@value #STATUS}, which {@code attach} reads back.
 */
final class Installer {
  static final String STATUS = "omnium.agent.status";

  /** Set once an earlier start (premain or attach) in this JVM installed the hook. */
  private static volatile boolean active;

  private Installer() { }

  static synchronized void start(String argument, Instrumentation inst, boolean atStartup) {
    try {
      AgentArgs args;
      try {
        args = AgentArgs.resolve(argument, System.getenv());
      } catch (AgentArgs.BadArgument e) {
        inactive("bad argument: " + e.getMessage());
        return;
      }
      if (args == null) {
        inactive("no argument and no " + AgentArgs.ENV + ": nothing is taken over (expected "
            + AgentArgs.FORM + ")");
        return;
      }
      long t0 = System.nanoTime();
      String problem = validate(args);
      long t1 = System.nanoTime();
      if (problem != null) {
        inactive("bad argument (" + args.source + "): " + problem);
        return;
      }
      if (!inst.isRetransformClassesSupported() && !atStartup) {
        inactive("this JVM cannot retransform classes: attach is not possible, use -javaagent");
        return;
      }
      boolean again = Activation.alreadyActive();
      Activation.activate(inst, args, !atStartup);
      active = true;
      AgentLog.debug("settings checked in " + (t1 - t0) / 1_000_000 + " ms, transformer installed in "
          + (System.nanoTime() - t1) / 1_000_000 + " ms");
      String status = "active: jdbc:postgresql: connections"
          + (args.match == null ? "" : " containing '" + args.match + "'")
          + " route through omnium with " + args.describe()
          + (pgjdbcOnClassPath() ? "" : " (pgjdbc is not on the class path yet, as in a Spring Boot fat jar:"
              + " pgjdbc-specific keys are checked at its first connection)");
      System.setProperty(STATUS, status);
      AgentLog.info((again ? "settings replaced, " : "") + status
          + (atStartup ? "" : " (connections opened from now on)"));
    } catch (Throwable t) {
      try {
        inactive("could not start: " + t);
      } catch (Throwable ignored) {
        // nothing more can be done: the application runs as without the agent
      }
    }
  }

  /**
   * Checks the keys with the driver's own rules, in a bundle whose parent is the system class
   * loader (complete when the application's pgjdbc is on the class path, omnium keys only
   * otherwise; the rest is checked at the first connect).
   */
  private static String validate(AgentArgs args) throws Throwable {
    return Bundle.forLoader(ClassLoader.getSystemClassLoader()).validate(args);
  }

  private static boolean pgjdbcOnClassPath() {
    return ClassLoader.getSystemClassLoader().getResource("org/postgresql/Driver.class") != null;
  }

  private static void inactive(String why) {
    if (active) {
      // A second attach with a bad argument: the first one's settings keep routing.
      AgentLog.error(why + ". The settings of the earlier start stay in force.");
      return;
    }
    System.setProperty(STATUS, "inactive: " + why);
    AgentLog.error(why + ". The application runs as without the agent.");
  }

  static File agentJar() throws IOException {
    try {
      return new File(Installer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (Exception e) {
      throw new IOException("cannot locate the agent jar: " + e, e);
    }
  }
}
