package dev.omnium.conformance;

import java.sql.Connection;

/** A scenario body on a fresh autocommit connection ({@link Run#open()}). */
@FunctionalInterface
interface OnConnection {
  void run(Run r, Connection c) throws Exception;

  /** @return the program that opens a connection and runs {@code body} on it */
  static Scenario.Program opened(OnConnection body) {
    return r -> body.run(r, r.open());
  }

  /** @return the program that runs {@code setup}, then opens a connection for {@code body} */
  static Scenario.Program after(Scenario.Program setup, OnConnection body) {
    return after(setup, Run::open, body);
  }

  /** How a scenario opens its connection, e.g. {@link Run#openTransaction()}. */
  @FunctionalInterface
  interface Opening {
    Connection open(Run r) throws Exception;
  }

  /** @return the program that runs {@code setup}, then opens {@code opening} for {@code body} */
  static Scenario.Program after(Scenario.Program setup, Opening opening, OnConnection body) {
    return r -> {
      setup.run(r);
      body.run(r, opening.open(r));
    };
  }
}
