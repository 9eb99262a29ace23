package dev.omnium.jdbc;

/**
 * Why a heartbeat cannot be read, in the words both the lag watcher's log and {@code check} use.
 * These problems are in the configuration, not the network: a new session would meet them again,
 * so the watcher keeps its session and says what to change.
 */
final class HeartbeatProblems {
  private HeartbeatProblems() { }

  /** SQLState 42501. */
  static String permissionDenied(String table, String serverMessage) {
    return "permission denied on heartbeat table " + table + " (SQLState 42501: " + serverMessage
        + "): GRANT SELECT ON " + table + " TO the replica user (replicaUser, else user) on the"
        + " primary; writers also need INSERT and UPDATE";
  }

  /** SQLState 42601: the name parses as SQL only when qualified, e.g. a reserved word. */
  static String badTableName(String table) {
    return "heartbeatTable=" + table + " is not a usable table name in SQL (SQLState 42601, a"
        + " reserved word such as order or user?): schema-qualify it (public." + unqualified(table)
        + ") or choose another name";
  }

  /** SQLState 40001 on the watcher's own probe. */
  static String recoveryConflict(String serverMessage) {
    return "the lag probe was cancelled by a recovery conflict (SQLState 40001: " + serverMessage
        + "); lag is unknown until the next probe";
  }

  private static String unqualified(String table) {
    int dot = table.lastIndexOf('.');
    return dot < 0 ? table : table.substring(dot + 1);
  }
}
