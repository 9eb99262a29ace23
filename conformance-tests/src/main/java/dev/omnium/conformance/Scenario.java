package dev.omnium.conformance;

/**
 * One JDBC program, run once per side of a comparison.
 *
 * @param group the behaviour it belongs to
 * @param name unique within its group
 * @param program the program
 */
public record Scenario(String group, String name, Program program) {
  /** The program: plain java.sql code against {@link Run#open()} connections. */
  @FunctionalInterface
  public interface Program {
    void run(Run r) throws Exception;
  }

  /** @return {@code group/name} */
  public String id() {
    return group + "/" + name;
  }

  /** Runs the program on one side and returns what it saw; an escaping exception is recorded. */
  public Observation runOn(Source source, Server server) throws Exception {
    Run r = new Run(source, server);
    try (r) {
      try {
        program.run(r);
      } catch (Exception e) {
        r.v("escaped", Run.failure(e));
      }
    }
    return r.observation();
  }
}
