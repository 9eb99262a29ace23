package dev.omnium.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import javax.sql.DataSource;

/**
 * The measured units of work, identical for every contender, and the checks that run before any
 * measurement (reads really reach the server they should, every pool is full).
 */
public final class Workloads {
  /**
   * Rounds of warm-up on every pooled connection: pgjdbc switches a statement to a named
   * server-side prepared statement at its 5th execution on a connection (prepareThreshold), which
   * costs one extra round trip then; after 6 rounds every connection is past it. The smoke run
   * lowers it (environment {@code OMNIUM_BENCH_WARM_ROUNDS=1}, inherited by JMH's forks): it checks that everything runs, not how fast.
   */
  public static final int WARM_ROUNDS = Integer.parseInt(System.getenv().getOrDefault("OMNIUM_BENCH_WARM_ROUNDS", "6"));

  private Workloads() { }

  /**
   * Case 1, the shape of Spring's {@code @Transactional(readOnly = true)} with JdbcTemplate: borrow,
   * {@code setReadOnly(true)}, {@code setAutoCommit(false)}, one-row SELECT by primary key, commit,
   * reset (auto-commit, then read-only, as {@code DataSourceTransactionManager} does), return.
   */
  public static long readTx(DataSource ds, int id) throws SQLException {
    return readTx(ds, id, BenchCluster.READ_SQL, 0);
  }

  /**
   * Case 1 with settings sent ahead of the query in its execute, as a driver that carries settings
   * per transaction sends them (no round trip more): {@code sql} is the settings and then
   * {@link BenchCluster#READ_SQL}, made once; {@code settings} results without rows come first.
   */
  public static long readTxAfter(DataSource ds, int id, String sql, int settings) throws SQLException {
    return readTx(ds, id, sql, settings);
  }

  /** With no settings ahead, the query runs through {@code executeQuery}, as an application's. */
  private static long readTx(DataSource ds, int id, String sql, int settings) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      long v;
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setInt(1, id);
        if (settings > 0) {
          ps.execute();
          for (int i = 0; i < settings; i++) ps.getMoreResults();
        }
        try (ResultSet rs = settings > 0 ? ps.getResultSet() : ps.executeQuery()) {
          if (rs == null || !rs.next()) throw new SQLException("bench_read row " + id + " is missing");
          v = rs.getLong(1) + rs.getString(2).length();
        }
      }
      c.commit();
      c.setAutoCommit(true);
      c.setReadOnly(false);
      return v;
    }
  }

  /** Case 1's shape, the query calling a function of the application's: {@code bench_plain}. */
  public static final String CALLING_SQL = "SELECT bench_plain(v), payload FROM bench_read WHERE id = ?";

  /** Case 1 with {@link #CALLING_SQL}: the driver cannot tell from the text what the call leaves. */
  public static long readTxCalling(DataSource ds, int id) throws SQLException {
    return readTx(ds, id, CALLING_SQL, 0);
  }

  /** Case 2: borrow, {@code setAutoCommit(false)}, one INSERT, commit, reset, return. */
  public static int writeTx(DataSource ds, int v) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      int n;
      try (PreparedStatement ps = c.prepareStatement(BenchCluster.WRITE_SQL)) {
        ps.setInt(1, v);
        n = ps.executeUpdate();
      }
      c.commit();
      c.setAutoCommit(true);
      return n;
    }
  }

  /** Case 3, one call: a read-only autocommit statement on a held connection with a reused PreparedStatement. */
  public static long autocommitRead(PreparedStatement ps, int id) throws SQLException {
    ps.setInt(1, id);
    try (ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) throw new SQLException("bench_read row " + id + " is missing");
      return rs.getLong(1) + rs.getString(2).length();
    }
  }

  /** Where a read-only transaction of this data source runs: "replica" or "primary". */
  public static String readServer(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      String where;
      try (Statement st = c.createStatement();
           ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
        rs.next();
        where = rs.getBoolean(1) ? "replica" : "primary";
      }
      c.commit();
      c.setAutoCommit(true);
      c.setReadOnly(false);
      return where;
    }
  }

  /** Waits until this data source's read-only transactions run on {@code expected}; fails the trial otherwise. */
  public static void awaitReadsOn(DataSource ds, String expected, Duration timeout, String who) {
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "(none)";
    while (true) {
      try {
        last = readServer(ds);
        if (expected.equals(last)) return;
      } catch (SQLException e) {
        last = e.toString();
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(who + ": read-only transactions run on " + last + ", expected " + expected
            + " within " + timeout.toMillis() + " ms");
      }
      sleep(50);
    }
  }

  /**
   * Holds {@code n} read-only transactions open at once, so every contender has opened (and, for the
   * wrappers, switched) all its physical connections before anything is measured; repeated rounds
   * let background pool filling finish.
   */
  public static void warm(DataSource ds, int n, int rounds) throws SQLException {
    for (int round = 0; round < rounds; round++) holdAtOnce(ds, n, true);
  }

  /** Warms the write path the same way: {@code n} connections in a write transaction at once, {@link #WARM_ROUNDS} times. */
  public static void warmWrites(DataSource ds, int n) throws SQLException {
    for (int round = 0; round < WARM_ROUNDS; round++) holdAtOnce(ds, n, false);
  }

  /**
   * {@code n} connections in a transaction at once, each after one statement: a read-only one
   * reads row {@code 1 + i} and commits; a write inserts and rolls back. Then each is reset and
   * returned.
   */
  private static void holdAtOnce(DataSource ds, int n, boolean readOnly) throws SQLException {
    List<Connection> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        Connection c = ds.getConnection();
        held.add(c);
        if (readOnly) c.setReadOnly(true);
        c.setAutoCommit(false);
        String sql = readOnly ? BenchCluster.READ_SQL : BenchCluster.WRITE_SQL;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setInt(1, readOnly ? 1 + i : -1);
          if (readOnly) {
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
            }
          } else {
            ps.executeUpdate();
          }
        }
      }
    } finally {
      for (Connection c : held) {
        try {
          if (readOnly) {
            c.commit();
          } else {
            c.rollback();
          }
          c.setAutoCommit(true);
          if (readOnly) c.setReadOnly(false);
        } finally {
          c.close();
        }
      }
    }
  }

  /** Primary keys to read, pre-drawn so the measured loop allocates nothing and every contender reads the same rows. */
  public static int[] ids(long seed, int count) {
    SplittableRandom r = new SplittableRandom(seed);
    int[] ids = new int[count];
    for (int i = 0; i < count; i++) ids[i] = 1 + r.nextInt(BenchCluster.ROWS);
    return ids;
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
