package dev.omnium.conformance;

import java.util.List;

/**
 * The servers' side of a run, as the test harness sees them through its own superuser
 * connections (never through the connections under test): rows, sessions and locks, setup and
 * faults.
 */
public interface Server {
  /** @return every row of {@code table} on the primary, ordered, rendered */
  String rows(String table) throws Exception;

  /**
   * @param app the application_name of the side under test
   * @return the non-idle sessions of that application (any route suffix, on every node) and the
   *     relation and advisory locks they hold, rendered without pids or ports
   */
  String activity(String app) throws Exception;

  /** Runs DDL/DML on the primary as superuser, then waits until every replica replayed it. */
  void setup(List<String> sql) throws Exception;

  /** Waits until every replica replayed everything committed on the primary so far. */
  void sync() throws Exception;

  /**
   * Terminates the backend {@code pid} on the node serving {@code port}, waits until it is gone.
   */
  void terminate(long pid, int port) throws Exception;

  /**
   * @param app the application_name of the side under test
   * @return {@link #activity(String)} once nothing of {@code app} is active any more, or after
   *     3 s: a closed session ends asynchronously on the server
   */
  String settledActivity(String app) throws Exception;

  /**
   * Ends every non-idle session of {@code app} left by a scenario, so the next one starts clean.
   */
  void reset(String app) throws Exception;

  /** @return {@code primary} or {@code replicaN} for a server port, else the port */
  String node(int port) throws Exception;
}
