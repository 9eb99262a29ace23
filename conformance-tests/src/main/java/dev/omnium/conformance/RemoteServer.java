package dev.omnium.conformance;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@link Server} of a forked application JVM: each call is one {@code CTL} line on stdout,
 * answered by the test JVM (which owns the cluster) with one line on stdin.
 */
final class RemoteServer implements Server {
  private final PrintStream out;
  private final BufferedReader in;

  RemoteServer(PrintStream out, BufferedReader in) {
    this.out = out;
    this.in = in;
  }

  private String ask(String op, Object... args) throws IOException {
    StringBuilder b = new StringBuilder("CTL\t").append(op);
    for (Object a : args) {
      b.append('\t').append(Observation.escape(String.valueOf(a)));
    }
    synchronized (out) {
      out.println(b);
      out.flush();
      String reply = in.readLine();
      if (reply == null) {
        throw new IOException("the test JVM went away");
      }
      String[] p = reply.split("\t", 2);
      String value = Observation.unescape(p.length > 1 ? p[1] : "");
      if (!p[0].equals("OK")) {
        throw new IllegalStateException("harness: " + op + " failed: " + value);
      }
      return value;
    }
  }

  @Override
  public String rows(String table) throws IOException {
    return ask("rows", table);
  }

  @Override
  public String activity(String app) throws IOException {
    return ask("activity", app);
  }

  @Override
  public String settledActivity(String app) throws IOException {
    return ask("settled", app);
  }

  @Override
  public void setup(List<String> sql) throws IOException {
    ask("setup", sql.toArray());
  }

  @Override
  public void sync() throws IOException {
    ask("sync");
  }

  @Override
  public void terminate(long pid, int port) throws IOException {
    ask("terminate", pid, port);
  }

  @Override
  public void reset(String app) throws IOException {
    ask("reset", app);
  }

  @Override
  public String node(int port) throws IOException {
    return ask("node", port);
  }

  /** Executes one CTL line of a forked JVM on {@code server}; returns the reply line. */
  static String serve(Server server, String line) {
    String[] p = line.split("\t", -1);
    List<String> args = new ArrayList<>();
    for (int i = 2; i < p.length; i++) {
      args.add(Observation.unescape(p[i]));
    }
    try {
      String result = switch (p[1]) {
        case "rows" -> server.rows(args.get(0));
        case "activity" -> server.activity(args.get(0));
        case "settled" -> server.settledActivity(args.get(0));
        case "setup" -> {
          server.setup(args);
          yield "";
        }
        case "sync" -> {
          server.sync();
          yield "";
        }
        case "terminate" -> {
          server.terminate(Long.parseLong(args.get(0)), Integer.parseInt(args.get(1)));
          yield "";
        }
        case "reset" -> {
          server.reset(args.get(0));
          yield "";
        }
        case "node" -> server.node(Integer.parseInt(args.get(0)));
        default -> throw new IllegalArgumentException("unknown control " + p[1]);
      };
      return "OK\t" + Observation.escape(result);
    } catch (Exception e) {
      return "ERR\t" + Observation.escape(e.toString());
    }
  }
}
