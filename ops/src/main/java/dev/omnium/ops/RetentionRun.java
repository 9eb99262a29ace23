package dev.omnium.ops;

import dev.omnium.ops.Catalog.Partition;
import dev.omnium.ops.RetentionReport.Action;
import dev.omnium.ops.RetentionReport.Verb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One retention run (or dry run): validate every rule, then act on each, logging as it goes. */
final class RetentionRun {
  private static final Logger LOG = LoggerFactory.getLogger(RetentionRun.class);

  /** A rule with what the catalog said about its table. */
  private record Target(RetentionRule rule, Catalog.Table table, Months.ColumnType type) {
    String name() {
      return rule.toString();
    }

    String column() {
      return Sql.ident(rule.column());
    }
  }

  /** What check shows per rule, as of this run. */
  private static final class Status {
    Integer monthsAhead;
    String oldestKept;
    Long defaultRows;
    boolean held;
    String outcome = "ok";
    String detail;

    void worse(String outcome, String detail) {
      if (rank(outcome) > rank(this.outcome)) {
        this.outcome = outcome;
      }
      if (detail != null) {
        this.detail = this.detail == null ? detail : this.detail + "; " + detail;
      }
    }

    private static int rank(String o) {
      return List.of("ok", "held", "problem", "error").indexOf(o);
    }
  }

  private final Retention r;
  private final LocalDate today;
  private final boolean dryRun;
  private final boolean ifDue;
  private final RetentionReport report;
  private final String runId = UUID.randomUUID().toString();
  private final Map<String, Status> statuses = new LinkedHashMap<>();
  private Connection c;
  private Lease lease;
  private Map<String, OpsTables.Hold> holds = Map.of();
  private int logged;

  RetentionRun(Retention retention, LocalDate today, boolean dryRun, boolean ifDue) {
    this.r = retention;
    this.today = today;
    this.dryRun = dryRun;
    this.ifDue = ifDue;
    this.report = new RetentionReport(today, dryRun);
  }

  RetentionReport execute() {
    Instant start = Instant.now();
    try (Connection conn = r.source.open()) {
      c = conn;
      c.setAutoCommit(true);
      if ("t".equals(Sql.one(c, "SELECT pg_is_in_recovery()"))) {
        error(null, null, null, "connected to a standby (pg_is_in_recovery()): retention runs on"
            + " the primary", start);
        return report;
      }
      List<Target> targets = validate();
      if (report.exitCode() == RetentionReport.ERROR) {
        return report; // nothing changed: a bad rule stops the whole run before it starts
      }
      if (!dryRun) {
        OpsTables.create(c, r.locks);
        lease = new Lease(r.holder, r.leaseDuration);
        Lease.Refusal no = lease.acquire(c, ifDue ? today : null);
        if (no != null) {
          lease = null;
          report.add(new Action(Verb.NOT_ELECTED, null, null, null, null, no.doneToday()
              ? "the run of " + no.doneDay() + " is done already"
              : "another process holds the run: " + no.holder() + " (lease until " + no.until()
              + ")", start, Instant.now()));
          return report;
        }
      }
      holds = OpsTables.holds(c);
      boolean completed = false;
      try {
        for (Target t : targets) {
          try {
            if (t.rule.kind() == RetentionRule.Kind.MONTH) {
              month(t);
            } else {
              trim(t);
            }
          } catch (Lease.LostException e) {
            throw e;
          } catch (SQLException | RuntimeException e) {
            error(t, t.table.qualified(), null, Sql.message(e), Instant.now());
          }
        }
        if (!dryRun) {
          if (logged == 0) {
            record(new Action(Verb.NOTHING_TO_DO, null, null, null, null, report.actions()
                .isEmpty() ? "every month ahead exists, nothing is past its keep"
                : "only what was logged earlier today (" + report.actions().size()
                + " held or problem)", start, Instant.now()));
          }
          writeStatus();
        }
        completed = true;
      } finally {
        if (lease != null) {
          try {
            lease.release(c, completed ? today : null);
          } catch (SQLException e) {
            LOG.warn("omnium-ops: could not release the retention lease (it expires by itself): {}",
                Sql.message(e));
          }
        }
      }
    } catch (SQLException | RuntimeException e) {
      error(null, null, null, "run stopped: " + Sql.message(e), start);
    }
    return report;
  }

  // ------------------------------------------------------------------ validation

  private List<Target> validate() throws SQLException {
    List<Target> targets = new ArrayList<>();
    for (RetentionRule rule : r.rules) {
      String where = rule.source() == null ? "rule '" + rule + "'" : rule.source() + " ('" + rule
          + "')";
      String problem = null;
      Catalog.Table t = Catalog.table(c, rule.table());
      Months.ColumnType type = null;
      if (t == null) {
        problem = "no table " + rule.table() + " on the connection's search_path";
      } else if (rule.kind() == RetentionRule.Kind.MONTH && t.kind() != 'p') {
        problem = t.qualified() + " is not partitioned: a month rule needs a table PARTITION BY"
            + " RANGE (" + rule.column() + ")";
      } else if (rule.kind() == RetentionRule.Kind.DELETE && t.kind() != 'r') {
        problem = t.qualified() + (t.kind() == 'p' ? " is partitioned: keep it with a month rule"
            : " is not a table");
      } else {
        String key = rule.kind() == RetentionRule.Kind.MONTH ? Catalog.partitionKey(c, t.oid())
            : null;
        String colType = Catalog.columnType(c, t.oid(), rule.column());
        type = colType == null ? null : Months.ColumnType.of(colType);
        if (key != null && !key.equals("r " + rule.column())) {
          problem = t.qualified() + " is partitioned by " + describeKey(key) + ", not by RANGE ("
              + rule.column() + ")";
        } else if (colType == null) {
          problem = t.qualified() + " has no column " + rule.column();
        } else if (type == null) {
          problem = "column " + rule.column() + " of " + t.qualified() + " is " + colType
              + ": a rule needs date, timestamp or timestamptz";
        } else if (rule.where() != null) {
          try (Statement st = c.createStatement()) {
            st.setQueryTimeout(timeoutSeconds());
            st.executeQuery("SELECT 1 FROM " + t.sql() + " WHERE (" + rule.where()
                + ") LIMIT 0").close();
          } catch (SQLException e) {
            problem = "bad where condition: " + Sql.message(e);
          }
        }
      }
      if (problem != null) {
        report.add(new Action(Verb.ERROR, rule.toString(), rule.table(), null, null,
            where + ": " + problem, Instant.now(), Instant.now()));
      } else {
        targets.add(new Target(rule, t, type));
        statuses.put(rule.toString(), new Status());
      }
    }
    return targets;
  }

  private static String describeKey(String key) {
    char strategy = key.charAt(0);
    String rest = key.substring(2);
    return (strategy == 'r' ? "RANGE " : strategy == 'l' ? "LIST " : "HASH ") + "(" + rest + ")";
  }

  // ------------------------------------------------------------------ month rules

  private void month(Target t) throws SQLException {
    Status status = statuses.get(t.name());
    OpsTables.Hold hold = holds.get(t.table.qualified());
    List<Partition> parts = Catalog.partitions(c, t.table.oid());
    Partition def = null;
    for (Partition p : parts) {
      if (p.isDefault()) {
        def = p;
      }
    }
    LocalDateTime cutoff = today.minusDays(t.rule.keepDays()).atStartOfDay();

    // A detach that an earlier run began and could not finish (it was cancelled between its two
    // transactions) is finished first.
    for (Partition p : parts) {
      if (p.detachPending()) {
        if (hold != null) {
          held(t, p, "a detach begun earlier waits to be finished, but " + hold.describe());
          status.held = true;
        } else {
          finishDetach(t, p);
        }
      }
    }

    Map<YearMonth, Long> inDefault = def == null ? Map.of() : defaultRows(t, def);
    YearMonth current = YearMonth.from(today);
    List<String> missing = new ArrayList<>();
    for (int i = 0; i <= r.monthsAhead; i++) {
      YearMonth m = current.plusMonths(i);
      if (coveredBy(parts, m) != null) {
        continue;
      }
      Partition overlap = overlapping(parts, m);
      Long rows = inDefault.get(m);
      String name = Months.partitionName(t.table.name(), m);
      Catalog.Table clash = Catalog.table(c, Sql.qualified(t.table.schema(), name));
      if (overlap != null) {
        missing.add(m + " (overlaps " + overlap.table().qualified() + " " + overlap.range() + ")");
      } else if (rows != null && rows > 0) {
        missing.add(m + " (" + rows + " of its rows are in the default partition "
            + def.table().qualified() + ")");
      } else if (clash != null) {
        missing.add(m + " (a table " + clash.qualified() + " exists but is no partition of "
            + t.table.qualified() + ")");
      } else {
        String create = "CREATE TABLE " + Sql.qualified(t.table.schema(), name) + " PARTITION OF "
            + t.table.sql() + " FOR VALUES FROM (" + t.type.literal(m.atDay(1)) + ") TO ("
            + t.type.literal(m.plusMonths(1).atDay(1)) + ")";
        Instant s = Instant.now();
        String bounds = "FOR VALUES FROM (" + t.type.literal(m.atDay(1)) + ") TO ("
            + t.type.literal(m.plusMonths(1).atDay(1)) + ")";
        if (dryRun) {
          record(new Action(Verb.CREATED, t.name(), t.table.qualified(),
              t.table.schema() + "." + name, null, bounds, s, s));
          continue;
        }
        try {
          renew();
          r.locks.inTransaction(c, conn -> {
            exec(conn, create);
            return null;
          }, retryLog(t, "create " + name));
          record(new Action(Verb.CREATED, t.name(), t.table.qualified(),
              t.table.schema() + "." + name, null, bounds, s, Instant.now()));
        } catch (Lease.LostException e) {
          throw e;
        } catch (SQLException e) {
          error(t, t.table.qualified(), t.table.schema() + "." + name, "not created: "
              + Sql.message(e), s);
          missing.add(m + " (" + Sql.message(e) + ")");
        }
      }
    }
    if (!missing.isEmpty()) {
      problem(t, t.table.qualified(), null, null, missing.size() + " of " + (r.monthsAhead + 1)
          + " months from " + current + " have no partition: " + String.join(", ", missing)
          + (dryRun ? "" : "; rows of such a month go to the default partition, or fail"));
      status.worse("problem", "months missing ahead");
    }

    List<Partition> old = new ArrayList<>();
    for (Partition p : parts) {
      if (!p.isDefault() && !p.detachPending() && p.range() != null && p.range().to() != null
          && !p.range().to().isAfter(cutoff)) {
        old.add(p);
      }
    }
    old.sort(Comparator.comparing((Partition p) -> p.range().from(),
        Comparator.nullsFirst(Comparator.naturalOrder())));
    for (Partition p : old) {
      if (hold != null) {
        held(t, p, "past keep (every row older than " + cutoff.toLocalDate() + "), but "
            + hold.describe());
        status.held = true;
      } else {
        drop(t, p, def != null, cutoff);
      }
    }

    long total = 0;
    for (long n : inDefault.values()) {
      total += n;
    }
    if (total > 0) {
      StringBuilder months = new StringBuilder();
      for (Map.Entry<YearMonth, Long> e : inDefault.entrySet()) {
        months.append(months.length() == 0 ? "" : ", ").append(e.getKey() == null ? "null"
            : e.getKey().toString()).append(": ").append(e.getValue());
      }
      problem(t, t.table.qualified(), def.table().qualified(), total, "rows in the default"
          + " partition (" + months + "): a table kept by month should have none; move them"
          + " into their months' partitions (they are never dropped from the default one)");
      status.worse("problem", total + " rows in the default partition");
    }
    status.defaultRows = def == null ? null : total;
    if (!dryRun) {
      List<Partition> now = Catalog.partitions(c, t.table.oid());
      int ahead = 0;
      while (coveredBy(now, current.plusMonths(ahead + 1)) != null && ahead < 120) {
        ahead++;
      }
      status.monthsAhead = coveredBy(now, current) == null ? -1 : ahead;
      LocalDateTime oldest = null;
      for (Partition p : now) {
        if (!p.isDefault() && p.range() != null && p.range().from() != null
            && (oldest == null || p.range().from().isBefore(oldest))) {
          oldest = p.range().from();
        }
      }
      status.oldestKept = oldest == null ? null : YearMonth.from(oldest).toString();
    }
  }

  /** The partition holding all of {@code m}, or null. */
  private static Partition coveredBy(List<Partition> parts, YearMonth m) {
    for (Partition p : parts) {
      if (!p.isDefault() && !p.detachPending() && p.range() != null && p.range().covers(m)) {
        return p;
      }
    }
    return null;
  }

  private static Partition overlapping(List<Partition> parts, YearMonth m) {
    for (Partition p : parts) {
      if (!p.isDefault() && !p.detachPending() && p.range() != null && p.range().overlaps(m)) {
        return p;
      }
    }
    return null;
  }

  /** Rows in the default partition by month (UTC), oldest first; a null key for null values. */
  private Map<YearMonth, Long> defaultRows(Target t, Partition def) throws SQLException {
    String col = t.type == Months.ColumnType.TIMESTAMPTZ ? t.column() + " AT TIME ZONE 'UTC'"
        : t.column();
    Map<YearMonth, Long> out = new TreeMap<>(Comparator.nullsFirst(Comparator.naturalOrder()));
    try (Statement st = c.createStatement()) {
      st.setQueryTimeout(timeoutSeconds());
      try (ResultSet rs = st.executeQuery("SELECT to_char(" + col + ", 'YYYY-MM'), count(*) FROM "
          + def.table().sql() + " GROUP BY 1 ORDER BY 1")) {
        while (rs.next()) {
          String m = rs.getString(1);
          out.put(m == null ? null : YearMonth.parse(m), rs.getLong(2));
        }
      }
    }
    return out;
  }

  private void drop(Target t, Partition p, boolean hasDefault, LocalDateTime cutoff)
      throws SQLException {
    String part = p.table().qualified();
    Instant s = Instant.now();
    long rows = count(p.table());
    String why = "every row older than " + p.range().to().toLocalDate() + ", past keep "
        + t.rule.keepDays() + "d (" + cutoff.toLocalDate() + ")";
    if (dryRun) {
      record(new Action(Verb.DETACHED, t.name(), t.table.qualified(), part, rows,
          hasDefault ? "not concurrently (the table has a default partition)" : "concurrently",
          s, s));
      record(new Action(Verb.DROPPED, t.name(), t.table.qualified(), part, rows, why, s, s));
      return;
    }
    String how;
    try {
      renew();
      if (hasDefault) {
        // PostgreSQL refuses DETACH ... CONCURRENTLY on a table with a default partition: a plain
        // detach, under the lock timeout, retried.
        r.locks.inTransaction(c, conn -> {
          exec(conn, "ALTER TABLE " + t.table.sql() + " DETACH PARTITION " + p.table().sql());
          return null;
        }, retryLog(t, "detach " + part));
        how = "not concurrently (the table has a default partition): under lock_timeout "
            + r.locks.lockTimeout().toMillis() + " ms";
      } else {
        detachConcurrently(t, p);
        how = "concurrently";
      }
    } catch (Lease.LostException e) {
      throw e;
    } catch (SQLException e) {
      error(t, t.table.qualified(), part, "not detached: " + Sql.message(e), s);
      return;
    }
    record(new Action(Verb.DETACHED, t.name(), t.table.qualified(), part, rows, how, s,
        Instant.now()));
    dropDetached(t, p.table(), rows, why);
  }

  /**
   * {@code DETACH PARTITION ... CONCURRENTLY} runs outside a transaction, in two: the first marks
   * the partition, the second waits for every query that may still use it and then detaches it.
   * Both lock the table in SHARE UPDATE EXCLUSIVE mode, which no writer's lock conflicts with, so
   * writers never queue behind it, and no session setting is needed (a transaction pooler could
   * not carry one to the statement). Its wait is bounded by the statement timeout (a
   * client-side cancel); if it is cancelled after the first transaction, the partition stays
   * "detach pending" and is finished with FINALIZE.
   */
  private void detachConcurrently(Target t, Partition p) throws SQLException {
    String sql = "ALTER TABLE " + t.table.sql() + " DETACH PARTITION " + p.table().sql();
    try {
      r.locks.retrying(() -> {
        exec(c, sql + " CONCURRENTLY");
        return null;
      }, retryLog(t, "detach " + p.table().qualified()));
    } catch (SQLException e) {
      if (!pending(p.table())) {
        throw e;
      }
      LOG.info("omnium-ops: detach of {} was interrupted ({}); finishing it", p.table()
          .qualified(), Sql.message(e));
      r.locks.retrying(() -> {
        exec(c, sql + " FINALIZE");
        return null;
      }, retryLog(t, "finalize detach " + p.table().qualified()));
    }
  }

  private boolean pending(Catalog.Table part) throws SQLException {
    return "t".equals(Sql.one(c, "SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = ?",
        part.oid()));
  }

  private void finishDetach(Target t, Partition p) throws SQLException {
    Instant s = Instant.now();
    long rows = count(p.table());
    if (dryRun) {
      record(new Action(Verb.DETACHED, t.name(), t.table.qualified(), p.table().qualified(),
          rows, "finishing a detach begun earlier (FINALIZE)", s, s));
      record(new Action(Verb.DROPPED, t.name(), t.table.qualified(), p.table().qualified(),
          rows, "detached past keep", s, s));
      return;
    }
    renew();
    r.locks.retrying(() -> {
      exec(c, "ALTER TABLE " + t.table.sql() + " DETACH PARTITION " + p.table().sql()
          + " FINALIZE");
      return null;
    }, retryLog(t, "finalize detach " + p.table().qualified()));
    record(new Action(Verb.DETACHED, t.name(), t.table.qualified(), p.table().qualified(), rows,
        "finished a detach begun earlier (FINALIZE)", s, Instant.now()));
    dropDetached(t, p.table(), rows, "its detach was begun because it was past keep");
  }

  private void dropDetached(Target t, Catalog.Table part, long rows, String why)
      throws SQLException {
    Instant s = Instant.now();
    try {
      renew();
      r.locks.inTransaction(c, conn -> {
        exec(conn, "DROP TABLE " + part.sql());
        return null;
      }, retryLog(t, "drop " + part.qualified()));
    } catch (Lease.LostException e) {
      throw e;
    } catch (SQLException e) {
      error(t, t.table.qualified(), part.qualified(), "detached but not dropped (it is a table of"
          + " its own now; drop it by hand once you have looked): " + Sql.message(e), s);
      return;
    }
    record(new Action(Verb.DROPPED, t.name(), t.table.qualified(), part.qualified(), rows, why, s,
        Instant.now()));
  }

  private long count(Catalog.Table table) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.setQueryTimeout(timeoutSeconds());
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table.sql())) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  // ------------------------------------------------------------------ delete rules

  private void trim(Target t) throws SQLException {
    Status status = statuses.get(t.name());
    LocalDate cutoff = today.minusDays(t.rule.keepDays());
    String cond = t.column() + " < ?" + (t.rule.where() == null ? "" : " AND (" + t.rule.where()
        + ")");
    OpsTables.Hold hold = holds.get(t.table.qualified());
    Instant s = Instant.now();
    if (hold != null || dryRun) {
      long rows;
      try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + t.table.sql()
          + " WHERE " + cond)) {
        ps.setQueryTimeout(timeoutSeconds());
        ps.setObject(1, t.type.parameter(cutoff));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          rows = rs.getLong(1);
        }
      }
      if (rows == 0) {
        return;
      }
      if (hold != null) {
        record(new Action(Verb.SKIPPED_HELD, t.name(), t.table.qualified(), null, rows,
            "rows older than " + cutoff + " are kept: " + hold.describe(), s, Instant.now()));
        status.held = true;
        status.worse("held", null);
      } else {
        record(new Action(Verb.TRIMMED, t.name(), t.table.qualified(), null, rows,
            "older than " + cutoff + ", in batches of " + r.batchSize, s, s));
      }
      return;
    }
    String delete = "DELETE FROM " + t.table.sql() + " WHERE ctid = ANY (ARRAY(SELECT ctid FROM "
        + t.table.sql() + " WHERE " + cond + " LIMIT " + r.batchSize + "))";
    long total = 0;
    int batches = 0;
    try {
      while (true) {
        renew();
        int n = r.locks.inTransaction(c, conn -> {
          try (PreparedStatement ps = conn.prepareStatement(delete)) {
            ps.setQueryTimeout(timeoutSeconds());
            ps.setObject(1, t.type.parameter(cutoff));
            return ps.executeUpdate();
          }
        }, retryLog(t, "trim " + t.table.qualified()));
        total += n;
        batches++;
        if (n < r.batchSize) {
          break;
        }
      }
    } catch (Lease.LostException e) {
      throw e;
    } catch (SQLException e) {
      if (total > 0) {
        record(new Action(Verb.TRIMMED, t.name(), t.table.qualified(), null, total, "older than "
            + cutoff + ", " + batches + " batch(es) before an error", s, Instant.now()));
      }
      throw e;
    }
    if (total > 0) {
      record(new Action(Verb.TRIMMED, t.name(), t.table.qualified(), null, total, "older than "
          + cutoff + ", " + batches + " batch(es) of at most " + r.batchSize + " rows, each its"
          + " own transaction", s, Instant.now()));
    }
  }

  // ------------------------------------------------------------------ recording

  private void held(Target t, Partition p, String detail) throws SQLException {
    Instant s = Instant.now();
    record(new Action(Verb.SKIPPED_HELD, t.name(), t.table.qualified(), p.table().qualified(),
        null, detail, s, s));
    statuses.get(t.name()).worse("held", null);
  }

  private void problem(Target t, String table, String partition, Long rows, String detail)
      throws SQLException {
    Instant s = Instant.now();
    record(new Action(Verb.PROBLEM, t.name(), table, partition, rows, detail, s, s));
  }

  private void error(Target t, String table, String partition, String detail, Instant start) {
    Action a = new Action(Verb.ERROR, t == null ? null : t.name(), table, partition, null, detail,
        start, Instant.now());
    if (t != null && statuses.containsKey(t.name())) {
      statuses.get(t.name()).worse("error", detail);
    }
    try {
      record(a);
    } catch (SQLException | RuntimeException e) {
      report.add(a);
      LOG.warn("omnium-ops: could not log an error: {}", Sql.message(e));
    }
  }

  /**
   * Adds an action to the report and, in a real run, to the log; a skip or problem already
   * logged today is not logged again, so a second run the same day logs only "nothing to do".
   */
  private void record(Action a) throws SQLException {
    report.add(a);
    LOG.info("omnium-ops: {} {} {}", a.verb().word(), a.partition() != null ? a.partition()
        : a.table() == null ? "" : a.table(), a.detail() == null ? "" : a.detail());
    if (dryRun || lease == null) {
      return;
    }
    if ((a.verb() == Verb.SKIPPED_HELD || a.verb() == Verb.PROBLEM)
        && OpsTables.loggedOn(c, today, a)) {
      return;
    }
    OpsTables.log(c, runId, today, a, r.holder);
    logged++;
  }

  private LockRetry.Listener retryLog(Target t, String what) {
    return (attempt, attempts, e, pause) -> LOG.info("omnium-ops: {} gave up waiting for a lock"
        + " after {} ms (attempt {} of {}: {}); writers went ahead, trying again in {} ms", what,
        r.locks.lockTimeout().toMillis(), attempt, attempts, Sql.message(e), pause.toMillis());
  }

  private void renew() throws SQLException {
    if (lease != null) {
      lease.renew(c);
    }
  }

  private void exec(Connection conn, String sql) throws SQLException {
    try (Statement st = conn.createStatement()) {
      st.setQueryTimeout(timeoutSeconds());
      st.execute(sql);
    }
  }

  private int timeoutSeconds() {
    return (int) Math.min(Integer.MAX_VALUE, r.statementTimeout.toSeconds());
  }

  private void writeStatus() throws SQLException {
    List<String> rules = new ArrayList<>(statuses.keySet());
    for (Map.Entry<String, Status> e : statuses.entrySet()) {
      Status s = e.getValue();
      RetentionRule rule = null;
      for (RetentionRule x : r.rules) {
        if (x.toString().equals(e.getKey())) {
          rule = x;
        }
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + OpsTables.STATUS
          + " (rule, table_name, kind, keep_days, months_ahead, oldest_kept, default_rows, held,"
          + " outcome, detail, run_id, run_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now())"
          + " ON CONFLICT (rule) DO UPDATE SET table_name = excluded.table_name,"
          + " kind = excluded.kind, keep_days = excluded.keep_days,"
          + " months_ahead = excluded.months_ahead, oldest_kept = excluded.oldest_kept,"
          + " default_rows = excluded.default_rows, held = excluded.held,"
          + " outcome = excluded.outcome, detail = excluded.detail, run_id = excluded.run_id,"
          + " run_at = excluded.run_at")) {
        ps.setString(1, e.getKey());
        ps.setString(2, rule.table());
        ps.setString(3, rule.kind().word());
        ps.setInt(4, rule.keepDays());
        ps.setObject(5, s.monthsAhead, Types.INTEGER);
        ps.setString(6, s.oldestKept);
        ps.setObject(7, s.defaultRows, Types.BIGINT);
        ps.setBoolean(8, s.held);
        ps.setString(9, s.outcome);
        ps.setString(10, s.detail);
        ps.setString(11, runId);
        ps.executeUpdate();
      }
    }
    try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + OpsTables.STATUS
        + " WHERE NOT (rule = ANY (?))")) {
      ps.setArray(1, c.createArrayOf("text", rules.toArray()));
      ps.executeUpdate();
    }
  }
}
