package dev.omnium.ops;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Migrations that never stop writes (for any migration runner; {@link FlywayMigrationGuard} uses
 * it for Flyway):
 *
 * <ul>
 *   <li>every statement runs with {@code lock_timeout} (2 s), so writers queued behind a
 *       migration's lock request wait at most that long; a unit that gives up on a lock (55P03)
 *       is rolled back, which lets them through, and tried again up to 5 times;</li>
 *   <li>a plain {@code CREATE INDEX} or an {@code ALTER COLUMN ... TYPE} on a table over 10 MB or
 *       100,000 rows is refused before it runs ({@link MigrationRefusedException}, naming the
 *       statement, the table's size and the fix);</li>
 *   <li>{@code CREATE INDEX CONCURRENTLY} (and every other {@code CONCURRENTLY} statement) runs
 *       outside a transaction, with a longer lock timeout (5 min): its locks never conflict with
 *       writers', it has to wait for every older transaction to end, and a timeout in the middle
 *       of it leaves an invalid index behind; but no wait is left unbounded.</li>
 * </ul>
 *
 * <pre>{@code
 * MigrationGuard guard = MigrationGuard.builder().build();
 * guard.run(connection, List.of("ALTER TABLE items ADD COLUMN note text"));
 * guard.run(connection, List.of("CREATE INDEX CONCURRENTLY items_note ON items (note)"));
 * }</pre>
 */
public final class MigrationGuard {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationGuard.class);

  private final LockRetry locks;
  private final long maxTableBytes;
  private final long maxTableRows;
  private final Duration concurrentLockTimeout;

  private MigrationGuard(Builder b) {
    this.concurrentLockTimeout = b.concurrentLockTimeout;
    this.locks = new LockRetry(b.lockTimeout, b.retries, b.retryPause);
    this.maxTableBytes = b.maxTableBytes;
    this.maxTableRows = b.maxTableRows;
  }

  /** @return a builder with the defaults: 2 s, 5 retries, 10 MB, 100,000 rows */
  public static Builder builder() {
    return new Builder();
  }

  /** @return the guard with the defaults */
  public static MigrationGuard defaults() {
    return builder().build();
  }

  /** @return the lock timeout every statement runs with */
  public Duration lockTimeout() {
    return locks.lockTimeout();
  }

  /** @return how many times a unit that gave up on a lock is tried again */
  public int retries() {
    return locks.retries();
  }

  /**
   * Runs one migration: its statements in one transaction with the lock timeout, each checked
   * just before it runs, the whole retried on 55P03; or, when its statements use
   * {@code CONCURRENTLY}, each on its own outside a transaction (a migration may not mix the
   * two, as in Flyway). Auto-commit is restored.
   *
   * @param c a connection to the primary
   * @param statements the migration's statements, in order
   * @throws MigrationRefusedException when a statement is refused (nothing of the unit stays)
   * @throws SQLException when a statement fails, 55P03 once every retry gave up
   */
  public void run(Connection c, List<String> statements) throws SQLException {
    Objects.requireNonNull(c, "connection");
    int concurrent = 0;
    for (String sql : statements) {
      if (MigrationStatement.of(sql).concurrently()) {
        concurrent++;
      }
    }
    if (concurrent > 0 && concurrent < statements.size()) {
      throw new MigrationRefusedException("a migration with CONCURRENTLY statements must hold"
          + " nothing else (they run outside a transaction, the others in one): split it");
    }
    if (concurrent > 0) {
      boolean autoCommit = c.getAutoCommit();
      try {
        c.setAutoCommit(true);
        for (String sql : statements) {
          String previous = beforeStatement(c, sql);
          try {
            execute(c, sql);
          } finally {
            afterStatement(c, previous);
          }
        }
      } finally {
        c.setAutoCommit(autoCommit);
      }
      return;
    }
    locks.inTransaction(c, conn -> {
      for (String sql : statements) {
        check(conn, sql);
        execute(conn, sql);
      }
      return null;
    }, listener(statements.isEmpty() ? "" : statements.get(0)));
  }

  /**
   * What a migration runner calls before it runs {@code sql} on {@code c}: refuses it
   * ({@link #check}), then sets the lock timeout for it: for the rest of the transaction when
   * one is open, else for the session (restore it with {@link #afterStatement}); a
   * {@code CONCURRENTLY} statement gets the longer concurrent lock timeout.
   *
   * @param c the migration's connection
   * @param sql the statement about to run
   * @return the session's lock_timeout before, to pass to {@link #afterStatement}; null when
   *     nothing needs restoring
   * @throws MigrationRefusedException when the statement is refused
   * @throws SQLException when the database fails
   */
  public String beforeStatement(Connection c, String sql) throws SQLException {
    MigrationStatement st = MigrationStatement.of(sql);
    boolean inTransaction = !c.getAutoCommit();
    if (st.concurrently()) {
      if (inTransaction) {
        throw new MigrationRefusedException("refused: " + st.text + ": CONCURRENTLY cannot run"
            + " inside a transaction. Fix: put it in a migration of its own (Flyway then runs it"
            + " outside a transaction)");
      }
    }
    String previous = null;
    long timeout = (st.concurrently() ? concurrentLockTimeout : locks.lockTimeout()).toMillis();
    if (inTransaction) {
      Sql.exec(c, locks.setLocal());
    } else {
      previous = Sql.one(c, "SELECT current_setting('lock_timeout')");
      Sql.exec(c, "SELECT set_config('lock_timeout', '" + timeout + "ms', false)");
    }
    check(c, st);
    return previous;
  }

  /**
   * Restores the session's lock timeout after a statement that ran outside a transaction.
   *
   * @param c the connection
   * @param previous what {@link #beforeStatement} returned
   * @throws SQLException when the database fails
   */
  public void afterStatement(Connection c, String previous) throws SQLException {
    if (previous != null) {
      Sql.one(c, "SELECT set_config('lock_timeout', ?, false)", previous);
    }
  }

  /**
   * Refuses {@code sql} when it is a plain {@code CREATE INDEX} or a column type change on a
   * table over the threshold. Reads the table's size and counts at most threshold + 1 rows.
   *
   * @param c a connection that sees the table (the migration's own, inside its transaction)
   * @param sql the statement
   * @throws MigrationRefusedException when it is refused
   * @throws SQLException when the database fails
   */
  public void check(Connection c, String sql) throws SQLException {
    check(c, MigrationStatement.of(sql));
  }

  private void check(Connection c, MigrationStatement st) throws SQLException {
    if (st.kind != MigrationStatement.Kind.CREATE_INDEX
        && st.kind != MigrationStatement.Kind.ALTER_COLUMN_TYPE || st.table == null) {
      return;
    }
    Catalog.Table t = Catalog.table(c, st.table);
    if (t == null) {
      return; // no such table (yet): the statement fails, or works on nothing big
    }
    // A partitioned table is the sum of its partitions (pg_partition_tree lists none for a
    // plain table).
    long bytes = Long.parseLong(Sql.one(c, "SELECT CASE WHEN relkind = 'p' THEN (SELECT"
        + " coalesce(sum(pg_table_size(relid)), 0) FROM pg_partition_tree(oid))"
        + " ELSE pg_table_size(oid) END FROM pg_class WHERE oid = ?", t.oid()));
    long rows;
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*)"
        + " FROM (SELECT 1 FROM " + t.sql() + " LIMIT " + (maxTableRows + 1) + ") r")) {
      rs.next();
      rows = rs.getLong(1);
    }
    if (bytes <= maxTableBytes && rows <= maxTableRows) {
      return;
    }
    String size = bytes(bytes) + ", " + (rows > maxTableRows ? "over " + String.format(
        Locale.ROOT, "%,d", maxTableRows) + " rows" : String.format(Locale.ROOT, "%,d rows",
        rows));
    String limit = "the guard refuses it on tables over " + bytes(maxTableBytes) + " or "
        + String.format(Locale.ROOT, "%,d", maxTableRows) + " rows";
    if (st.kind == MigrationStatement.Kind.CREATE_INDEX) {
      throw new MigrationRefusedException("refused: " + st.text + ": " + t.qualified() + " is "
          + size + ", and a plain CREATE INDEX blocks every write to it until the index is"
          + " built (" + limit + "). Fix: CREATE INDEX CONCURRENTLY, alone in a migration of its"
          + " own (it runs outside a transaction and lets writes go on)");
    }
    throw new MigrationRefusedException("refused: " + st.text + ": " + t.qualified() + " is "
        + size + ", and ALTER COLUMN ... TYPE rewrites it under an ACCESS EXCLUSIVE lock that"
        + " blocks reads and writes until it ends (" + limit + "). Fix: add a new column of the"
        + " new type, fill it in batches, switch the code to it, then drop the old column");
  }

  /** Runs {@code attempt} again (at most {@link #retries} times) while it fails on 55P03. */
  <T> T retrying(LockRetry.Attempt<T> attempt, String what) throws SQLException {
    return locks.retrying(attempt, listener(what));
  }

  private LockRetry.Listener listener(String sql) {
    String what = MigrationStatement.shorten(sql);
    return (attempt, attempts, e, pause) -> LOG.warn("omnium-ops migration guard: {} gave up"
        + " waiting for a lock after {} ms (attempt {} of {}); rolled back so writers go on,"
        + " trying again in {} ms", what, locks.lockTimeout().toMillis(), attempt, attempts,
        pause.toMillis());
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  static String bytes(long n) {
    if (n >= 10L << 20) {
      return (n >> 20) + " MB";
    }
    if (n >= 10L << 10) {
      return (n >> 10) + " kB";
    }
    return n + " bytes";
  }

  /** The guard's settings. */
  public static final class Builder {
    private Duration lockTimeout = Duration.ofSeconds(2);
    private int retries = 5;
    private Duration retryPause = LockRetry.FIRST_PAUSE;
    private long maxTableBytes = 10L << 20;
    private long maxTableRows = 100_000;
    private Duration concurrentLockTimeout = Duration.ofMinutes(5);

    private Builder() {
    }

    /**
     * @param timeout lock_timeout of {@code CONCURRENTLY} statements (default 5 min): they wait
     *     for every older transaction, but never block writers
     * @return this
     */
    public Builder concurrentLockTimeout(Duration timeout) {
      this.concurrentLockTimeout = LockRetry.positive("concurrentLockTimeout", timeout);
      return this;
    }

    /**
     * @param timeout lock_timeout of every statement (default 2 s)
     * @return this
     */
    public Builder lockTimeout(Duration timeout) {
      this.lockTimeout = LockRetry.positive("lockTimeout", timeout);
      return this;
    }

    /**
     * @param retries how many times a unit that gave up on a lock is tried again (default 5)
     * @return this
     */
    public Builder retries(int retries) {
      this.retries = LockRetry.atLeastZero("retries", retries);
      return this;
    }

    /**
     * @param pause before the first retry (default 500 ms), doubled each time up to 8 s, ±25 %
     * @return this
     */
    public Builder retryPause(Duration pause) {
      this.retryPause = Objects.requireNonNull(pause, "pause");
      return this;
    }

    /**
     * @param bytes tables larger than this (heap and TOAST, all partitions) are big (10 MB)
     * @return this
     */
    public Builder maxTableBytes(long bytes) {
      this.maxTableBytes = atLeastZero("maxTableBytes", bytes);
      return this;
    }

    /**
     * @param rows tables with more rows than this are big (default 100,000)
     * @return this
     */
    public Builder maxTableRows(long rows) {
      this.maxTableRows = atLeastZero("maxTableRows", rows);
      return this;
    }

    private static long atLeastZero(String name, long n) {
      if (n < 0) {
        throw new IllegalArgumentException(name + " must be 0 or more, got " + n);
      }
      return n;
    }

    /** @return the guard */
    public MigrationGuard build() {
      return new MigrationGuard(this);
    }
  }
}
