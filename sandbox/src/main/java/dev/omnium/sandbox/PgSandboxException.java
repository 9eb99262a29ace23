package dev.omnium.sandbox;

/**
 * Thrown when the sandbox cannot set up, start, stop or control a PostgreSQL server. The message
 * says what failed and, where it helps, includes the tail of the server log or the command output.
 */
public class PgSandboxException extends RuntimeException {

  /**
   * @param message what failed
   */
  public PgSandboxException(String message) {
    super(message);
  }

  /**
   * @param message what failed
   * @param cause the underlying failure
   */
  public PgSandboxException(String message, Throwable cause) {
    super(message, cause);
  }
}
