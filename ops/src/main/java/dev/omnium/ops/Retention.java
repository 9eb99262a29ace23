package dev.omnium.ops;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import javax.sql.DataSource;

/**
 * Old data leaves by the month: the daily retention run, and holds, for services (the command
 * line, {@link OpsCli}, uses the same).
 *
 * <pre>{@code
 * Retention retention = Retention.builder(dataSource)
 *     .rules(RetentionRules.read(Path.of("retention.rules")))
 *     .build();
 * RetentionReport report = retention.runIfDue(LocalDate.now(ZoneOffset.UTC)); // every process
 * }</pre>
 *
 * <p>A run creates the current month's partition and the next {@code monthsAhead} for every
 * month rule, detaches ({@code CONCURRENTLY} where PostgreSQL allows it) and drops the months
 * whose newest possible row is past the rule's keep unless a hold covers the table, trims the
 * tables of delete rules in batches (each its own transaction), reports rows in a DEFAULT
 * partition and months missing ahead, and writes every action to {@code omnium_retention_log}.
 * Statements that take a lock writers may queue behind run with {@code lock_timeout} (2 s) and
 * are retried; one process of a fleet runs at a time (a lease row, see {@code Lease}).
 * Thread-safe: each call opens its own connection.
 */
public final class Retention {
  /** Where connections come from. */
  @FunctionalInterface
  public interface ConnectionSource {
    /**
     * @return a new connection to the primary, closed by the caller
     * @throws SQLException when none can be opened
     */
    Connection open() throws SQLException;
  }

  /**
   * The result of a hold or release.
   *
   * @param changed true when the hold table changed (and a log row was written)
   * @param message a sentence for people
   */
  public record HoldResult(boolean changed, String message) { }

  final ConnectionSource source;
  final List<RetentionRule> rules;
  final LockRetry locks;
  final int batchSize;
  final int monthsAhead;
  final Duration statementTimeout;
  final Duration leaseDuration;
  final String holder;

  private Retention(Builder b) {
    this.source = b.source;
    this.rules = List.copyOf(b.rules);
    this.locks = new LockRetry(b.lockTimeout, b.lockRetries, b.retryPause);
    this.batchSize = b.batchSize;
    this.monthsAhead = b.monthsAhead;
    this.statementTimeout = b.statementTimeout;
    this.leaseDuration = b.leaseDuration;
    this.holder = b.holder;
  }

  /**
   * @param dataSource connections to the primary (a pool is fine, also behind PgBouncer in
   *     transaction mode)
   * @return a builder
   */
  public static Builder builder(DataSource dataSource) {
    Objects.requireNonNull(dataSource, "dataSource");
    return new Builder(dataSource::getConnection);
  }

  /**
   * @param url the primary's {@code jdbc:postgresql:} URL, or a {@code jdbc:omnium:postgresql:}
   *     URL (its primary hosts are used, its replicas ignored)
   * @param info more connection properties (user, password, …), or null; the URL wins
   * @return a builder
   */
  public static Builder builder(String url, Properties info) {
    String pg = primaryUrl(url);
    Properties p = new Properties();
    if (info != null) {
      p.putAll(info);
    }
    return new Builder(() -> DriverManager.getConnection(pg, p));
  }

  /**
   * @param source where connections come from
   * @return a builder
   */
  public static Builder builder(ConnectionSource source) {
    return new Builder(Objects.requireNonNull(source, "source"));
  }

  /**
   * The pgjdbc URL of the primary for a {@code jdbc:postgresql:} or {@code jdbc:omnium:} URL:
   * {@code targetServerType=primary} (a multi-host list finds the primary; a standby alone is
   * refused) and {@code ApplicationName=omnium-ops} unless the URL names them.
   */
  static String primaryUrl(String url) {
    Objects.requireNonNull(url, "url");
    String pg;
    if (url.startsWith("jdbc:omnium:postgresql:")) {
      pg = "jdbc:" + url.substring("jdbc:omnium:".length());
    } else if (url.startsWith("jdbc:postgresql:")) {
      pg = url;
    } else {
      throw new IllegalArgumentException("not a jdbc:postgresql: or jdbc:omnium:postgresql: URL: "
          + Secrets.mask(url));
    }
    String sep = pg.indexOf('?') < 0 ? "?" : "&";
    if (!pg.contains("targetServerType=")) {
      pg += sep + "targetServerType=primary";
      sep = "&";
    }
    if (!pg.contains("ApplicationName=")) {
      pg += sep + "ApplicationName=omnium-ops";
    }
    return pg;
  }

  /** @return the rules this instance runs */
  public List<RetentionRule> rules() {
    return rules;
  }

  /**
   * The daily run, now: creates, drops, trims and logs as described above, unless another
   * process holds the run (then one {@link RetentionReport.Verb#NOT_ELECTED} action, exit 1).
   *
   * @param today the day to act for (months and keep are counted from its midnight, UTC)
   * @return what was done; never throws for a database error (it is an ERROR action)
   */
  public RetentionReport run(LocalDate today) {
    return new RetentionRun(this, today, false, false).execute();
  }

  /**
   * What {@link #run} would do today, changing nothing (no table is created, not even the log).
   *
   * @param today the day to plan for
   * @return the plan
   */
  public RetentionReport plan(LocalDate today) {
    return new RetentionRun(this, today, true, false).execute();
  }

  /**
   * For every process of a fleet, as often as it likes: runs only when no run completed on
   * {@code today} yet and no other process is running it; otherwise returns a report with one
   * {@link RetentionReport.Verb#NOT_ELECTED} action and logs nothing.
   *
   * @param today the day to act for
   * @return what was done, or why nothing was
   */
  public RetentionReport runIfDue(LocalDate today) {
    return new RetentionRun(this, today, false, true).execute();
  }

  /** @return today in UTC, the default day of a run */
  public static LocalDate todayUtc() {
    return LocalDate.now(ZoneOffset.UTC);
  }

  /**
   * Holds a table: its months are not dropped and its rows not trimmed until released. Written
   * to {@code omnium_retention_hold} and logged.
   *
   * @param table the table ({@code name} or {@code schema.name}); it must exist
   * @param reason why (shown by every skip and by {@code check})
   * @param by who
   * @return whether it changed; an existing hold is left as it is
   * @throws SQLException when the table does not exist or the database fails
   */
  public HoldResult hold(String table, String reason, String by) throws SQLException {
    return new Holds(this).hold(table, reason, by);
  }

  /**
   * Releases a hold (logged).
   *
   * @param table the held table
   * @param by who
   * @return whether it changed (false: it was not held)
   * @throws SQLException when the database fails
   */
  public HoldResult release(String table, String by) throws SQLException {
    return new Holds(this).release(table, by);
  }

  /** How a {@link Retention} runs. */
  public static final class Builder {
    private final ConnectionSource source;
    private List<RetentionRule> rules = List.of();
    private Duration lockTimeout = Duration.ofSeconds(2);
    private int lockRetries = 5;
    private Duration retryPause = LockRetry.FIRST_PAUSE;
    private int batchSize = 10_000;
    private int monthsAhead = 3;
    private Duration statementTimeout = Duration.ofMinutes(5);
    private Duration leaseDuration = Duration.ofMinutes(10);
    private String holder = defaultHolder();

    private Builder(ConnectionSource source) {
      this.source = source;
    }

    /**
     * @param rules the rules ({@link RetentionRules#read} reads a file)
     * @return this
     */
    public Builder rules(List<RetentionRule> rules) {
      this.rules = List.copyOf(rules);
      return this;
    }

    /**
     * @param timeout the longest a statement waits for a lock that writers may queue behind
     *     (default 2 s): creating a partition, detaching without CONCURRENTLY, dropping, each
     *     trim batch
     * @return this
     */
    public Builder lockTimeout(Duration timeout) {
      this.lockTimeout = LockRetry.positive("lockTimeout", timeout);
      return this;
    }

    /**
     * @param retries how many times a step that gave up on a lock is tried again (default 5)
     * @return this
     */
    public Builder lockRetries(int retries) {
      this.lockRetries = LockRetry.atLeastZero("lockRetries", retries);
      return this;
    }

    /**
     * @param pause the pause before the first retry (default 500 ms), doubled for each next one
     *     up to 8 s, ±25 %
     * @return this
     */
    public Builder retryPause(Duration pause) {
      this.retryPause = Objects.requireNonNull(pause, "pause");
      return this;
    }

    /**
     * @param rows rows deleted per transaction by a delete rule (default 10,000)
     * @return this
     */
    public Builder batchSize(int rows) {
      if (rows < 1) {
        throw new IllegalArgumentException("batchSize must be 1 or more, got " + rows);
      }
      this.batchSize = rows;
      return this;
    }

    /**
     * @param months month partitions kept ready after the current one (default 3)
     * @return this
     */
    public Builder monthsAhead(int months) {
      if (months < 0 || months > 24) {
        throw new IllegalArgumentException("monthsAhead must be 0 to 24, got " + months);
      }
      this.monthsAhead = months;
      return this;
    }

    /**
     * @param timeout the client-side bound on any one statement (default 5 min)
     * @return this
     */
    public Builder statementTimeout(Duration timeout) {
      if (timeout.toSeconds() < 1) {
        throw new IllegalArgumentException("statementTimeout must be 1 s or more, got "
            + timeout);
      }
      this.statementTimeout = timeout;
      return this;
    }

    /**
     * @param duration how long the run's lease lasts without renewal (default 10 min); a dead
     *     runner's lease frees itself after this long
     * @return this
     */
    public Builder leaseDuration(Duration duration) {
      if (duration.toSeconds() < 1) {
        throw new IllegalArgumentException("leaseDuration must be 1 s or more, got " + duration);
      }
      this.leaseDuration = duration;
      return this;
    }

    /**
     * @param name who runs (shown to the other processes and in the log), default
     *     {@code user@host pid N}
     * @return this
     */
    public Builder holder(String name) {
      this.holder = Objects.requireNonNull(name, "name");
      return this;
    }

    /** @return the configured retention */
    public Retention build() {
      return new Retention(this);
    }

    private static String defaultHolder() {
      String host = System.getenv("HOSTNAME");
      return System.getProperty("user.name", "?") + "@" + (host == null ? "localhost" : host)
          + " pid " + ProcessHandle.current().pid();
    }
  }
}
