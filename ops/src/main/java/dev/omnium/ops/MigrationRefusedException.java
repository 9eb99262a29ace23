package dev.omnium.ops;

import java.sql.SQLException;

/**
 * A migration statement the guard refused before it ran: a plain {@code CREATE INDEX} or a
 * column type change on a table over the size threshold, or a {@code CONCURRENTLY} statement
 * inside a transaction. The message names the statement, the table's size and the fix. SQLState
 * {@value #SQL_STATE}.
 */
public final class MigrationRefusedException extends SQLException {
  private static final long serialVersionUID = 1L;
  /** The SQLState of every refusal. */
  public static final String SQL_STATE = "OMR01";

  MigrationRefusedException(String message) {
    super(message, SQL_STATE);
  }
}
