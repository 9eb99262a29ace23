package dev.omnium.agent;

import java.lang.instrument.Instrumentation;

/**
 * {@code -javaagent:omnium-agent.jar=replica=HOST:PORT&maxAge=5s&applicationName=api} (premain) and
 * runtime attach (agentmain) share one start path, {@link Installer#start}, which never throws.
 * This class references nothing else, so that even a broken jar cannot stop the application.
 */
public final class OmniumAgent {
  private OmniumAgent() { }

  public static void premain(String argument, Instrumentation inst) {
    start(argument, inst, true);
  }

  public static void agentmain(String argument, Instrumentation inst) {
    start(argument, inst, false);
  }

  private static void start(String argument, Instrumentation inst, boolean atStartup) {
    try {
      Installer.start(argument, inst, atStartup);
    } catch (Throwable t) {
      try {
        System.err.println("[omnium-agent] ERROR could not start: " + t
            + ". The application runs as without the agent.");
      } catch (Throwable ignored) {
        // nothing more can be done
      }
    }
  }
}
