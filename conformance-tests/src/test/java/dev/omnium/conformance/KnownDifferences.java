package dev.omnium.conformance;

import java.util.List;

/**
 * Every difference from pgjdbc the suite accepts, each narrowed to one scenario, its keys and
 * the exact values on both sides, with the reason. Nothing here hides a whole category: a new
 * difference in the same scenario still fails.
 */
final class KnownDifferences {
  /**
   * One accepted difference: {@code mode} is one mode, several separated by {@code |}, or "*";
   * {@code keys} are the observations it covers, each with the same values on both sides.
   */
  record Known(String mode, String scenario, List<String> keys, String pgjdbc, String omnium,
      String reason) { }

  private static final String CLOSES_RESOURCES = "closing a logical connection closes its"
      + " statements and result sets, as HikariCP does for every pooled connection; plain pgjdbc"
      + " leaves them open (buffered rows stay readable, execute fails 08003)";
  private static final String SESSION_OBJECTS = "prepared statements, held cursors, temp"
      + " tables, session advisory locks and LISTEN stay on the session they were made on: with"
      + " pgjdbc under an application HikariCP pool that session is the next borrower's, through"
      + " omnium read-only work runs on other sessions, and a pooled session that holds such"
      + " state is closed, never lent (issue 32 item 4)";
  private static final String UNSEEN_SETTING = "a setting changed where the driver cannot see"
      + " it (inside a function, on pgjdbc's own statement reached through unwrap) does not"
      + " follow the logical connection to its read sessions; the pooled session is reset before"
      + " anyone borrows it, where pgjdbc's pooled session keeps it for the next borrower";
  private static final String READERS = "sql-state/";
  private static final String CLOSED = "lifecycle/statement-after-connection-close";

  static final List<Known> ALL = List.of(
      // driver mode under HikariCP: the pgjdbc side keeps raw session state in its pooled session
      new Known("driver", READERS + "setting-made-by-a-function-never-reaches-the-next-connection",
          List.of("reader0", "reader1", "reader2", "writer"), "tenant b|tenant_b",
          "public|\"$user\", public", UNSEEN_SETTING),
      new Known("driver", READERS + "statement-unwrapped-leaves-the-next-connection-as-new",
          List.of("reader0", "reader1", "reader2"), "tenant b|tenant_b",
          "public|\"$user\", public", UNSEEN_SETTING),
      new Known("driver", READERS + "prepared-statement-never-reaches-the-next-connection",
          List.of("reader0", "reader1", "reader2"), "2", "0", SESSION_OBJECTS),
      new Known("driver", READERS + "prepared-statement-never-reaches-the-next-connection",
          List.of("writer"), "2", "1", SESSION_OBJECTS),
      // pg_cursors lists the query's own portal too
      new Known("driver", READERS + "held-cursor-never-reaches-the-next-connection",
          List.of("reader0", "reader1", "reader2", "writer"), "2", "1", SESSION_OBJECTS),
      new Known("driver", READERS + "temp-table-never-reaches-the-next-connection",
          List.of("reader0", "reader1", "reader2"), "1", "0", SESSION_OBJECTS),
      new Known("driver", READERS + "listen-never-reaches-the-next-connection",
          List.of("reader0", "reader1", "reader2"), "1", "0", SESSION_OBJECTS),
      new Known("driver", READERS + "advisory-lock-never-reaches-the-next-connection",
          List.of("settled after-close", "settled end"), "sessions=[] locks=["
              + "advisory:4343:ExclusiveLock:true, advisory:4344:ExclusiveLock:true,"
              + " advisory:4345:ExclusiveLock:true, advisory:4350:ExclusiveLock:true,"
              + " advisory:4351:ExclusiveLock:true, advisory:4352:ExclusiveLock:true]",
          "sessions=[] locks=[advisory:4350:ExclusiveLock:true, advisory:4351:ExclusiveLock:true,"
              + " advisory:4352:ExclusiveLock:true]", SESSION_OBJECTS),
      // OmniumDataSource and the agent compared with plain pgjdbc (no pool on the pgjdbc side)
      new Known("datasource|agent", CLOSED, List.of("st.closed", "ps.closed"), "false", "true",
          CLOSES_RESOURCES),
      new Known("datasource|agent", CLOSED, List.of("st.execute", "ps.execute"),
          "!PSQLException(08003)", "!PSQLException(55000)", CLOSES_RESOURCES),
      new Known("datasource|agent", "lifecycle/result-after-connection-close", List.of("rs.closed"),
          "false", "true", CLOSES_RESOURCES),
      new Known("datasource|agent", "lifecycle/result-after-connection-close", List.of("rs.next"),
          "true", "!PSQLException(55000)", CLOSES_RESOURCES));

  private KnownDifferences() { }

  /** @return why this difference is accepted, or null when it is a mismatch */
  static String reason(String mode, String scenario, String key, String pgjdbc, String omnium) {
    for (Known k : ALL) {
      if ((k.mode().equals("*") || List.of(k.mode().split("\\|")).contains(mode))
          && k.scenario().equals(scenario) && k.keys().contains(key)
          && k.pgjdbc().equals(String.valueOf(pgjdbc))
          && k.omnium().equals(String.valueOf(omnium))) {
        return k.reason();
      }
    }
    return null;
  }
}
