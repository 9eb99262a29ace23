package dev.omnium.agent;

import java.io.File;
import java.util.Properties;

/**
 * {@code java -jar omnium-agent.jar attach PID 'replica=HOST:PORT&maxAge=5s&applicationName=api'}:
 * loads this jar into a running JVM (same user, a JDK with the {@code jdk.attach} module on this
 * side). Connections the application opens from then on are taken over; those already open stay
 * plain pgjdbc. Without the argument, the target's own {@code OMNIUM_AGENT_ARGS} is used.
 * {@code java -jar omnium-agent.jar list} shows the JVMs that can be attached.
 */
public final class AttachMain {
  private AttachMain() { }

  public static void main(String[] argv) {
    int code;
    try {
      code = run(argv);
    } catch (NoClassDefFoundError e) {
      System.err.println("omnium-agent: this java has no jdk.attach module (" + e.getMessage()
          + "): run attach with a JDK's java");
      code = 1;
    }
    System.exit(code);
  }

  static int run(String[] argv) {
    if (argv.length == 1 && "list".equals(argv[0])) {
      for (com.sun.tools.attach.VirtualMachineDescriptor d : com.sun.tools.attach.VirtualMachine.list()) {
        System.out.println(d.id() + " " + d.displayName());
      }
      return 0;
    }
    if (argv.length < 2 || argv.length > 3 || !"attach".equals(argv[0])) {
      System.err.println("usage: java -jar omnium-agent.jar attach PID ['key=value&key=value...']\n"
          + "       java -jar omnium-agent.jar list\n"
          + "  keys: those of the jdbc:omnium: URL (" + AgentArgs.FORM + "),\n"
          + "        plus match=SUBSTRING to take over only JDBC URLs that contain it.\n"
          + "  Without keys the target JVM's OMNIUM_AGENT_ARGS is used.\n"
          + "  As -javaagent: java -javaagent:omnium-agent.jar='replica=HOST:PORT&applicationName=api' -jar app.jar");
      return 2;
    }
    String pid = argv[1];
    String args = argv.length == 3 ? argv[2] : "";
    if (!args.isBlank()) {
      try {
        AgentArgs.parse(args, "the attach argument"); // fail here, not in the target's log
      } catch (AgentArgs.BadArgument e) {
        System.err.println("omnium-agent: bad argument: " + e.getMessage());
        return 2;
      }
    }
    File jar;
    try {
      jar = Installer.agentJar();
    } catch (Exception e) {
      System.err.println("omnium-agent: " + e.getMessage());
      return 1;
    }
    com.sun.tools.attach.VirtualMachine vm;
    try {
      vm = com.sun.tools.attach.VirtualMachine.attach(pid);
    } catch (Exception e) {
      System.err.println("omnium-agent: cannot attach to JVM " + pid + ": " + e
          + " (same user? is it a HotSpot JVM started without -XX:+DisableAttachMechanism?)");
      return 1;
    }
    try {
      vm.loadAgent(jar.getAbsolutePath(), args);
      Properties props = vm.getSystemProperties();
      String status = props.getProperty(Installer.STATUS, "unknown (no status reported)");
      System.out.println("omnium-agent: JVM " + pid + ": " + status);
      return status.startsWith("active") ? 0 : 1;
    } catch (Exception e) {
      System.err.println("omnium-agent: loading the agent into JVM " + pid + " failed: " + e);
      return 1;
    } finally {
      try {
        vm.detach();
      } catch (Exception ignored) {
        // the target keeps running either way
      }
    }
  }
}
