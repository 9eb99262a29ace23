package dev.omnium.jdbc;

import static dev.omnium.jdbc.HealthTable.col;

import dev.omnium.jdbc.HealthServer.Beat;
import dev.omnium.jdbc.HealthTable.Column;
import dev.omnium.jdbc.HealthTable.Kind;
import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * {@code java -jar omnium-jdbc.jar check '<URL>' [--json]}: the database health page as a
 * command and a probe. Reads system views only, on short-lived plain pgjdbc connections (one
 * per server, {@code application_name = <applicationName>:check}, read-only sessions, short
 * timeouts), never through a router.
 *
 * <p>Exit status: {@value #HEALTHY} healthy; {@value #DEGRADED} degraded (a replica's heartbeat
 * lag over {@code maxAge}, a replica unreachable, a configured replica that is not in recovery,
 * no heartbeat table or row, a stale heartbeat); {@value #PRIMARY_DOWN} the primary cannot be
 * reached (also: it answers but is in recovery, or the URL is invalid). Every degraded or failed
 * check prints one line saying what is wrong.
 */
final class HealthCheck {

  static final int HEALTHY = 0;
  static final int DEGRADED = 1;
  static final int PRIMARY_DOWN = 2;

  /** Seconds; an unreachable server costs at most about the login timeout. */
  static final int CONNECT_TIMEOUT_SECONDS = 3;
  static final int LOGIN_TIMEOUT_SECONDS = 5;
  static final int SOCKET_TIMEOUT_SECONDS = 10;
  static final long STATEMENT_TIMEOUT_MILLIS = 8000;
  static final long LOCK_TIMEOUT_MILLIS = 2000;
  /** Hard bound for one server's collection, should every timeout above fail to fire. */
  private static final long SERVER_DEADLINE_MILLIS = 60_000;

  enum Severity { FAILED, DEGRADED, NOTE }

  record Problem(Severity severity, String where, String message) {
    String line() {
      return where == null ? message : where + ": " + message;
    }
  }

  private static final Column SERVER = col("server", "server", Kind.TEXT);

  private HealthCheck() {
  }

  /**
   * Checks the cluster of {@code omniumUrl} and prints the report to {@code out}.
   *
   * @param omniumUrl a {@code jdbc:omnium:postgresql:} URL
   * @param info extra properties (user, password, …), may be null; the URL wins
   * @param json JSON instead of the text table
   * @return the exit status: 0 healthy, 1 degraded, 2 the primary cannot be reached
   */
  static int run(String omniumUrl, Properties info, boolean json, PrintStream out) {
    Report report;
    try {
      report = check(omniumUrl, info);
    } catch (SQLException | RuntimeException e) {
      report = Report.invalid(omniumUrl, info, e);
    }
    out.print(report.scrub(json ? report.json() : report.text()));
    out.flush();
    return report.exitCode();
  }

  static Report check(String omniumUrl, Properties info) throws SQLException {
    Object quiet = Tracing.quietBegin();
    try {
      return checkQuietly(omniumUrl, info);
    } finally {
      Tracing.quietEnd(quiet);
    }
  }

  private static Report checkQuietly(String omniumUrl, Properties info) throws SQLException {
    OmniumConfig cfg = OmniumConfig.of(omniumUrl, info);
    Report r = new Report(cfg, omniumUrl, info);
    List<HealthServer> all = new ArrayList<>();
    all.add(r.primary);
    all.addAll(r.replicas);

    Long lockKey = null;
    String lockKeyError = null;
    try {
      lockKey = HeartbeatWriter.lockKey(cfg.heartbeatTable());
    } catch (RuntimeException e) {
      lockKeyError = "cannot compute the writer's advisory lock key: " + HealthServer.message(e);
    }

    try {
      Map<HealthServer, List<HealthServer>> behind =
          collectAll(all, cfg.heartbeatTable(), lockKey, lockKeyError);
      r.replicas.clear();
      for (HealthServer address : r.addresses) {
        List<HealthServer> servers = behind.getOrDefault(address, List.of(address));
        r.replicas.addAll(servers);
        for (HealthServer s : servers) {
          if (s != address) all.add(s);
        }
      }
      measureLag(r);
      r.evaluate();
      r.readLargestTables();
    } finally {
      for (HealthServer s : all) {
        s.close();
      }
    }
    return r;
  }

  /**
   * Every server at once: a dead one costs its timeout, not the sum of everyone's. A replica
   * address first finds the servers behind it ({@link CheckEndpoint}); returns them per address.
   */
  private static Map<HealthServer, List<HealthServer>> collectAll(List<HealthServer> servers,
      String table, Long lockKey, String lockKeyError) {
    Map<HealthServer, List<HealthServer>> behind = new ConcurrentHashMap<>();
    List<Thread> threads = new ArrayList<>();
    for (HealthServer s : servers) {
      Thread t = new Thread(() -> {
        Tracing.quietThread();
        List<HealthServer> found = s.configuredPrimary ? List.of(s) : CheckEndpoint.discover(s);
        for (HealthServer f : found) {
          f.collect(table, lockKey, lockKeyError);
        }
        behind.put(s, found);
      },
          "omnium-check-" + s.label);
      t.setDaemon(true);
      t.start();
      threads.add(t);
    }
    long deadline = System.nanoTime() + SERVER_DEADLINE_MILLIS * 1_000_000L;
    for (int i = 0; i < threads.size(); i++) {
      Thread t = threads.get(i);
      try {
        long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
        t.join(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (t.isAlive()) {
        HealthServer s = servers.get(i);
        s.reachable = false;
        s.error = "no answer within " + SERVER_DEADLINE_MILLIS / 1000 + "s";
        behind.remove(s); // its sessions close when its thread ends (the check's process exits)
      }
    }
    return behind;
  }

  /** Polls a replica's replay position this often while waiting for it to pass the primary's. */
  static final long LAG_POLL_MILLIS = 20;
  /** Skew below this (beyond the estimate's own uncertainty) is not worth a note. */
  static final long SKEW_NOTE_MICROS = 100_000;

  /**
   * Each replica's lag by the router's clock-free measure: read the primary's WAL insert position
   * at client time {@code s0}, then poll each replica's replay position; once it reaches that
   * position (at client time {@code t}) the replica shows every commit from before {@code s0},
   * so its staleness is at most {@code t - s0}. A replica still short of it after maxAge is over
   * maxAge. Only this machine's monotonic clock is used; the wait is bounded by maxAge.
   */
  static void measureLag(Report r) {
    List<HealthServer> pending = new ArrayList<>();
    for (HealthServer s : r.replicas) {
      if (s.isStandby() && s.beat == Beat.OK && r.verdict(s) == ServerIdentity.Verdict.SAME) {
        s.beatSeconds = null; // the replica's clock minus the primary's: never used
        pending.add(s);
      }
    }
    if (pending.isEmpty()) {
      return;
    }
    if (!r.primary.isPrimary()) {
      for (HealthServer s : pending) {
        s.lagError = "lag unknown: the primary's WAL position cannot be read (primary "
            + (r.primary.reachable ? "in recovery" : "unreachable") + ")";
      }
      return;
    }
    long s0 = System.nanoTime();
    long target;
    try {
      target = r.primary.insertLsn();
    } catch (SQLException | RuntimeException e) {
      for (HealthServer s : pending) {
        s.lagError = "lag unknown: cannot read the primary's WAL position: "
            + HealthServer.message(e);
      }
      return;
    }
    long deadline = s0 + r.cfg.maxAge().toNanos();
    while (true) {
      for (Iterator<HealthServer> it = pending.iterator(); it.hasNext(); ) {
        HealthServer s = it.next();
        try {
          long replay = s.replayLsn();
          if (replay != 0 && Long.compareUnsigned(replay, target) >= 0) {
            s.beatSeconds = (System.nanoTime() - s0) / 1e9;
            it.remove();
          }
        } catch (SQLException | RuntimeException e) {
          s.lagError = "lag unknown: cannot read the replay position: " + HealthServer.message(e);
          it.remove();
        }
      }
      long now = System.nanoTime();
      if (pending.isEmpty()) {
        return;
      }
      if (now - deadline >= 0) {
        for (HealthServer s : pending) {
          s.beatSeconds = (now - s0) / 1e9;
          s.lagOver = true;
        }
        return;
      }
      LockSupport.parkNanos(Math.min(deadline - now, LAG_POLL_MILLIS * 1_000_000L));
    }
  }

  /**
   * How the check's session on {@code route}'s side gets its settings ({@link StartupSettings}):
   * the route's, with the check's own timeouts.
   */
  static StartupSettings checkSettings(OmniumConfig cfg, Route route) {
    Map<String, String> s = cfg.sessionSettings(route);
    s.put("statement_timeout", Long.toString(STATEMENT_TIMEOUT_MILLIS));
    s.put("lock_timeout", Long.toString(LOCK_TIMEOUT_MILLIS));
    return new StartupSettings(s, cfg.userOptions(), cfg.poolerTransaction());
  }

  /** pgjdbc properties for the check's own session on {@code route}'s side. */
  static Properties checkProperties(OmniumConfig cfg, Route route) {
    Properties p = cfg.physicalProperties(route);
    p.setProperty("ApplicationName", cfg.applicationName() + ":check");
    p.setProperty("connectTimeout", Integer.toString(CONNECT_TIMEOUT_SECONDS));
    p.setProperty("loginTimeout", Integer.toString(LOGIN_TIMEOUT_SECONDS));
    p.setProperty("socketTimeout", Integer.toString(SOCKET_TIMEOUT_SECONDS));
    // Appended last, so they win over the route's own settings: a probe never writes or waits long.
    p.setProperty("options", (p.getProperty("options", "") + " -c statement_timeout="
        + STATEMENT_TIMEOUT_MILLIS + " -c lock_timeout=" + LOCK_TIMEOUT_MILLIS).trim());
    // Read-only in a transaction of its own (HealthServer), never for the session: a pooler may
    // share it, and a primary whose session starts read-only would look like a standby to
    // pgjdbc's targetServerType check (multi-host primary lists).
    return p;
  }

  // ------------------------------------------------------------------ the report

  static final class Report {
    final OmniumConfig cfg;
    final String maskedUrl;
    final Instant checkedAt = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    final HealthServer primary;
    /** Every server checked as a replica: behind an address reaching several, each of them. */
    final List<HealthServer> replicas = new ArrayList<>();
    /** Each configured replica address, as its first session found it. */
    final List<HealthServer> addresses = new ArrayList<>();
    final List<Problem> problems = new ArrayList<>();
    /** Where the heavy queries ran; null when no server could run them. */
    HealthServer heavyOn;
    String heavyWhy;
    HealthTable largestTables;
    String largestTablesError;
    private final Set<String> secrets = new LinkedHashSet<>();

    Report(OmniumConfig cfg, String url, Properties info) {
      this.cfg = cfg;
      this.maskedUrl = Secrets.maskUrl(url);
      Properties primaryProps = checkProperties(cfg, Route.PRIMARY);
      Properties replicaProps = checkProperties(cfg, Route.WATCHER);
      this.primary = new HealthServer("primary", true, join(cfg.primaryHosts()), cfg.primaryUrl(),
          primaryProps, checkSettings(cfg, Route.PRIMARY));
      int i = 1;
      for (HostSpec h : cfg.replicas()) {
        replicas.add(new HealthServer("replica" + i++, false, h.toString(), cfg.replicaUrl(h),
            replicaProps, checkSettings(cfg, Route.WATCHER)));
      }
      addresses.addAll(replicas);
      collectSecrets(primaryProps);
      collectSecrets(replicaProps);
      collectSecrets(info);
    }

    private Report(String url, Properties info, Exception e) {
      this.cfg = null;
      this.maskedUrl = url == null ? null : Secrets.maskUrl(url);
      this.primary = null;
      collectSecrets(info);
      problems.add(new Problem(Severity.FAILED, null, "cannot check: " + HealthServer.message(e)));
    }

    static Report invalid(String url, Properties info, Exception e) {
      return new Report(url, info, e);
    }

    int exitCode() {
      int code = HEALTHY;
      for (Problem p : problems) {
        if (p.severity() == Severity.FAILED) {
          return PRIMARY_DOWN;
        }
        if (p.severity() == Severity.DEGRADED) {
          code = DEGRADED;
        }
      }
      return code;
    }

    String status() {
      switch (exitCode()) {
        case HEALTHY:
          return "healthy";
        case DEGRADED:
          return "degraded";
        default:
          return primary == null ? "failed" : "primary unreachable";
      }
    }

    double maxAgeSeconds() {
      return cfg.maxAge().toNanos() / 1e9;
    }

    /**
     * Older than this, the heartbeat on the primary is stale: maxAge (no replica can be fresh
     * then), but never less than two writer intervals, so a slow writer does not flap the probe.
     */
    double staleAfterSeconds() {
      return Math.max(maxAgeSeconds(), 2 * cfg.heartbeatInterval().toNanos() / 1e9);
    }

    /**
     * Reachable, in recovery, a standby of this primary, heartbeat read and within maxAge: reads
     * may be routed to it.
     */
    boolean isFresh(HealthServer r) {
      return r.isStandby() && verdict(r) == ServerIdentity.Verdict.SAME && r.beat == Beat.OK
          && r.beatSeconds != null && !r.lagOver && r.beatSeconds <= maxAgeSeconds();
    }

    /**
     * A standby against the primary as the lag watcher judges it: the same system identifier and
     * timeline, or why not ({@link ServerIdentity}); unknown when either was not read.
     */
    ServerIdentity.Verdict verdict(HealthServer r) {
      ServerIdentity p = primary.isPrimary() ? primary.identity : null;
      if (r.identity == null || p == null) return ServerIdentity.Verdict.IDENTITY_UNKNOWN;
      return r.identity.against(p);
    }

    // ---- judgement ----

    void evaluate() {
      String table = cfg.heartbeatTable();
      // No replica: nothing reads the heartbeat, so its problems are only notes.
      Severity beatSeverity = replicas.isEmpty() ? Severity.NOTE : Severity.DEGRADED;
      String p = where(primary);
      if (!primary.reachable) {
        add(Severity.FAILED, p, "cannot reach the primary: " + primary.error);
      } else if (primary.isStandby()) {
        add(Severity.FAILED, p, "is in recovery: it is a standby, not a primary (writes fail)");
      } else {
        switch (primary.beat) {
          case OK:
            if (primary.beatSeconds > staleAfterSeconds()) {
              add(beatSeverity, p, "stale heartbeat: " + table + ".beat_at is "
                  + HealthTable.seconds(primary.beatSeconds) + " old (stale after "
                  + HealthTable.seconds(staleAfterSeconds()) + "); " + writerSummary());
            }
            break;
          case NO_TABLE:
            add(beatSeverity, p, "no heartbeat table " + table
                + ": run a writer (heartbeatWriter=true"
                + " in one application's URL, or java -jar omnium-jdbc.jar heartbeat '<URL>')");
            break;
          case NO_ROW:
            add(beatSeverity, p, "no heartbeat row: " + table
                + " has no row with id = 1 (is a writer running?)");
            break;
          case PERMISSION_DENIED:
          case BAD_TABLE_NAME:
            add(beatSeverity, p, beatProblem(primary));
            break;
          default:
            add(beatSeverity, p, "cannot read heartbeat table " + table + ": " + primary.beatError);
        }
      }
      for (HealthServer r : replicas) {
        String w = where(r);
        if (!r.reachable) {
          add(Severity.DEGRADED, w, "replica unreachable: " + r.error);
        } else if (!r.isStandby() && listedAsPrimary(r)) {
          // Every node in both lists (Patroni-style): roles are discovered, this one is expected.
          add(Severity.NOTE, w, "is the primary now (not in recovery; also in the primary list):"
              + " no read is routed to it through a replica pool");
        } else if (!r.isStandby()) {
          add(Severity.DEGRADED, w, "not in recovery: this configured replica is a primary,"
              + " not a replica; no read is routed to it");
        } else if (primary.isPrimary() && verdict(r) != ServerIdentity.Verdict.SAME) {
          add(Severity.DEGRADED, w, identityProblem(r) + "; no read is routed to it");
        } else if (r.beat == Beat.NO_TABLE) {
          add(Severity.DEGRADED, w, "no heartbeat table " + table
              + " on the replica: lag unknown, reads go to the fallback pool");
        } else if (r.beat == Beat.NO_ROW) {
          add(Severity.DEGRADED, w, "no heartbeat row in " + table
              + " on the replica: lag unknown, reads go to the fallback pool");
        } else if (r.beat == Beat.PERMISSION_DENIED || r.beat == Beat.BAD_TABLE_NAME
            || r.beat == Beat.RECOVERY_CONFLICT) {
          add(Severity.DEGRADED, w,
              beatProblem(r) + ": lag unknown, reads go to the fallback pool");
        } else if (r.beat != Beat.OK) {
          add(Severity.DEGRADED, w, "cannot read the heartbeat on the replica: " + r.beatError);
        } else if (r.beatSeconds == null) {
          add(Severity.DEGRADED, w, r.lagError + ": reads go to the fallback pool");
        } else if (r.lagOver || r.beatSeconds > maxAgeSeconds()) {
          String why = Boolean.TRUE.equals(r.replayPaused) ? " (WAL replay is paused)"
              : r.walReceiver == null ? " (no WAL receiver: not streaming)"
              : !"streaming".equals(r.walReceiver) ? " (WAL receiver " + r.walReceiver + ")" : "";
          add(Severity.DEGRADED, w, "heartbeat lag " + lagText(r)
              + " is over maxAge " + duration(cfg.maxAge()) + why
              + ": reads go to the fallback pool");
        } else if (r.walReceiver == null) {
          add(Severity.NOTE, w, "no WAL receiver: the replica is not streaming, its lag will grow");
        }
      }
      for (HealthServer s : servers()) {
        skew(s);
        for (String e : s.sectionErrors) {
          add(Severity.NOTE, where(s), "could not read " + e);
        }
        if (s.lockWaits != null && !s.lockWaits.isEmpty()) {
          Object longest = s.lockWaits.get(0, "waitingSeconds");
          add(Severity.NOTE, where(s), s.lockWaits.size() + (s.lockWaits.size() == 1
              ? " session waits"
              : " sessions wait") + " for a lock (longest "
              + HealthTable.format(Kind.SECONDS, longest) + ")");
        }
        if (s.retention != null) {
          for (String note : s.retention.notes()) {
            add(Severity.NOTE, where(s), note);
          }
        }
        if (s.slots != null) {
          for (int i = 0; i < s.slots.size(); i++) {
            if (Boolean.FALSE.equals(s.slots.get(i, "active"))) {
              add(Severity.NOTE, where(s), "replication slot " + s.slots.get(i, "slotName")
                  + " is inactive and retains " + HealthTable.format(Kind.BYTES,
                  s.slots.get(i, "retainedWalBytes")) + " of WAL");
            }
          }
        }
      }
    }

    /** The same words as the lag watcher's log line: its state, and why. */
    private String identityProblem(HealthServer r) {
      ServerIdentity.Verdict v = verdict(r);
      ServerIdentity mine = r.identity != null ? r.identity
          : ServerIdentity.unknown("its identity could not be read");
      ServerIdentity p = primary.identity != null && primary.isPrimary() ? primary.identity
          : ServerIdentity.unknown("the primary's identity could not be read");
      return "not a replica of this primary (" + v + "): " + mine.explain(v, p);
    }

    /** The same words as the lag watcher's log line for the same problem. */
    private String beatProblem(HealthServer s) {
      String table = cfg.heartbeatTable();
      switch (s.beat) {
        case PERMISSION_DENIED:
          return HeartbeatProblems.permissionDenied(table, s.beatError);
        case BAD_TABLE_NAME:
          return HeartbeatProblems.badTableName(table);
        default:
          return HeartbeatProblems.recoveryConflict(s.beatError);
      }
    }

    /**
     * A NOTE when a server's clock is off this machine's by more than {@link #SKEW_NOTE_MICROS}
     * beyond the estimate's uncertainty, DEGRADED beyond half of maxAge.
     */
    private void skew(HealthServer s) {
      ClockOffset o = s.clockOffset;
      if (!s.reachable || !o.known()) {
        return;
      }
      long off = o.offsetMicros();
      long sure = Math.abs(off) - o.uncertaintyMicros();
      if (sure <= SKEW_NOTE_MICROS) {
        return;
      }
      boolean degraded = sure * 2 > cfg.maxAge().toNanos() / 1000;
      add(degraded ? Severity.DEGRADED : Severity.NOTE, where(s), "clock skew: its clock is "
          + offsetText(o) + " off this machine's (" + (off > 0 ? "ahead" : "behind") + ")"
          + (degraded ? ", more than half of maxAge " + duration(cfg.maxAge()) : "")
          + "; lag is measured without server clocks, but its timestamps (now(), beat_at, logs)"
          + " disagree with the other servers'");
    }

    private boolean listedAsPrimary(HealthServer r) {
      for (HostSpec h : cfg.primaryHosts()) {
        if (h.toString().equals(r.address)) return true;
      }
      return false;
    }

    /** Heavy queries on the freshest replica, else on the primary; never on a stale replica. */
    void readLargestTables() {
      HealthServer best = null;
      for (HealthServer r : replicas) {
        if (isFresh(r) && (best == null || r.beatSeconds < best.beatSeconds)) {
          best = r;
        }
      }
      if (best != null) {
        heavyWhy = "fresh replica, lag " + HealthTable.seconds(best.beatSeconds);
      } else if (primary.reachable) {
        best = primary;
        heavyWhy = replicas.isEmpty() ? "no replica configured" : "no fresh replica";
      } else {
        largestTablesError = "skipped: no fresh replica and the primary is unreachable";
        return;
      }
      heavyOn = best;
      try {
        largestTables = best.largestTables();
      } catch (SQLException | RuntimeException e) {
        largestTablesError = HealthServer.message(e);
        add(Severity.NOTE, where(best), "could not read the largest tables: " + largestTablesError);
      }
    }

    // ---- text ----

    String text() {
      StringBuilder out = new StringBuilder();
      out.append("omnium check: ").append(status().toUpperCase(Locale.ROOT))
          .append(" (exit ").append(exitCode()).append(")\n");
      for (Problem p : problems) {
        out.append("  ").append(pad(p.severity().name(), 9)).append(p.line()).append('\n');
      }
      if (primary == null) {
        return out.toString();
      }
      out.append('\n');
      out.append("url              ").append(maskedUrl).append('\n');
      out.append("checked at       ").append(checkedAt).append('\n');
      out.append("maxAge           ").append(duration(cfg.maxAge())).append('\n');
      out.append("heartbeat table  ").append(cfg.heartbeatTable()).append('\n');
      for (HealthServer a : addresses) {
        out.append("replica address  ").append(a.label).append(' ')
            .append(a.address).append(": ").append(behindText(a)).append('\n');
      }

      heading(out, "servers");
      serversTable().printText(out, "  ");

      heading(out, "heartbeat on the primary (" + cfg.heartbeatTable() + ")");
      out.append("  beat_at age  ").append(beatSummary()).append('\n');
      out.append("  writer lock  ").append(writerSummary()).append('\n');

      heading(out, "streaming replication (pg_stat_replication on the primary)");
      section(out, primary.replication, primary);

      heading(out,
          "connections (client backends by application_name and state; the check's own excluded)");
      merged(out, s -> s.connections);

      heading(out, "oldest open transactions (top " + HealthServer.TOP_TRANSACTIONS
          + " by xact_start, per server)");
      merged(out, s -> s.oldestTransactions);

      heading(out, "idle-in-transaction sessions (top " + HealthServer.TOP_TRANSACTIONS
          + " by xact_start, per server)");
      merged(out, s -> s.idleInTransaction);

      heading(out, "lock waits (pg_locks not granted, blocking pids from pg_blocking_pids)");
      merged(out, s -> s.lockWaits);

      heading(out, "replication slots and retained WAL (on the primary)");
      section(out, primary.slots, primary);

      heading(out, "retention (recorded by omnium-ops on the primary)");
      if (primary.retention != null) {
        primary.retention.text(out);
      } else {
        out.append("  (not read)\n");
      }

      heading(out, "largest tables (top " + HealthServer.TOP_TABLES + " by pg_total_relation_size"
          + (heavyOn == null ? "" : "; read on " + heavyOn.label + " " + heavyOn.endpoint + ": "
          + heavyWhy)
          + ")");
      if (largestTables != null) {
        largestTables.printText(out, "  ");
      } else {
        out.append("  (").append(largestTablesError).append(")\n");
      }
      return out.toString();
    }

    private HealthTable serversTable() {
      HealthTable t = new HealthTable(List.of(
          col("server", "server", Kind.TEXT), col("endpoint", "endpoint", Kind.TEXT),
          col("reachable", "reachable", Kind.BOOL), col("version", "version", Kind.TEXT),
          col("inRecovery", "in recovery", Kind.BOOL), col("replay", "replay", Kind.TEXT),
          col("walReceiver", "wal receiver", Kind.TEXT),
          col("lag", "heartbeat lag", Kind.TEXT), col("replayBehind", "replay behind", Kind.BYTES),
          col("connections", "connections", Kind.TEXT),
          col("clockOffset", "clock offset", Kind.TEXT)));
      for (HealthServer s : servers()) {
        String lag = null;
        String replay = null;
        String receiver = null;
        Long behind = null;
        if (s.reachable && s != primary) {
          lag = s.beat != Beat.OK ? beatWord(s.beat) : s.beatSeconds == null ? "unknown"
              : lagText(s) + (isFresh(s) ? " (fresh)" : " (stale)");
          if (s.isStandby() && verdict(s) != ServerIdentity.Verdict.SAME) {
            lag = verdict(s).toString();
          }
          if (s.isStandby()) {
            replay = Boolean.TRUE.equals(s.replayPaused) ? "paused" : "running";
            receiver = s.walReceiver == null ? "none" : s.walReceiver;
            behind = replayBehind(s);
          }
        }
        t.add(s.label, s.endpoint, s.reachable, s.version, s.inRecovery, replay, receiver, lag,
            behind, s.reachable ? s.clientConnections + "/" + s.maxConnections : null,
            s.reachable && s.clockOffset.known() ? offsetText(s.clockOffset) : null);
      }
      return t;
    }

    private void merged(StringBuilder out, Function<HealthServer, HealthTable> pick) {
      Map<String, HealthTable> byServer = new LinkedHashMap<>();
      List<String> missing = new ArrayList<>();
      for (HealthServer s : servers()) {
        if (!s.reachable) {
          continue;
        }
        HealthTable t = pick.apply(s);
        if (t == null) {
          missing.add(s.label);
        } else {
          byServer.put(s.label, t);
        }
      }
      HealthTable m = HealthTable.merge(SERVER, byServer);
      if (byServer.isEmpty() && missing.isEmpty()) {
        out.append("  (no server reachable)\n");
        return;
      }
      if (m == null || m.isEmpty()) {
        out.append("  (none").append(byServer.isEmpty() ? "" : " on " + String.join(", ",
            byServer.keySet()))
            .append(")\n");
      } else {
        m.printText(out, "  ");
      }
      if (!missing.isEmpty()) {
        out.append("  (not read on ").append(String.join(", ", missing)).append(")\n");
      }
    }

    private void section(StringBuilder out, HealthTable t, HealthServer s) {
      if (!s.reachable) {
        out.append("  (").append(s.label).append(" unreachable)\n");
      } else if (s.isStandby()) {
        out.append("  (").append(s.label).append(" is in recovery)\n");
      } else if (t == null) {
        out.append("  (could not be read)\n");
      } else {
        t.printText(out, "  ");
      }
    }

    private String beatSummary() {
      if (!primary.isPrimary()) {
        return "-";
      }
      if (primary.beat != Beat.OK) {
        return beatWord(primary.beat);
      }
      return HealthTable.seconds(primary.beatSeconds) + (primary.beatSeconds <= staleAfterSeconds()
          ? " (fresh; stale after " : " (STALE; stale after ")
          + HealthTable.seconds(staleAfterSeconds()) + ")";
    }

    /** "held by pid 42 (api:heartbeat, 10.0.0.5, connected 3m02s)" or why not. */
    String writerSummary() {
      HealthTable w = primary.writerLock;
      if (!primary.isPrimary()) {
        return "-";
      }
      if (w == null) {
        return "unknown (pg_locks not read)";
      }
      List<String> holders = new ArrayList<>();
      for (int i = 0; i < w.size(); i++) {
        if (Boolean.TRUE.equals(w.get(i, "granted"))) {
          holders.add("pid " + w.get(i, "pid")
              + " (" + HealthTable.format(Kind.TEXT, w.get(i, "applicationName"))
              + ", client " + HealthTable.format(Kind.TEXT, w.get(i, "clientAddr"))
              + ", connected " + HealthTable.format(Kind.SECONDS, w.get(i, "connectedSeconds"))
              + ")");
        }
      }
      return holders.isEmpty() ? "not held: no omnium heartbeat writer is connected to the primary"
          : "held by " + String.join(", ", holders);
    }

    // ---- JSON ----

    String json() {
      Map<String, Object> root = new LinkedHashMap<>();
      root.put("status", status());
      root.put("exitCode", exitCode());
      root.put("url", maskedUrl);
      root.put("checkedAt", checkedAt.toString());
      List<Object> ps = new ArrayList<>();
      for (Problem p : problems) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("severity", p.severity().name().toLowerCase(Locale.ROOT));
        m.put("where", p.where());
        m.put("message", p.message());
        ps.add(m);
      }
      root.put("problems", ps);
      if (primary == null) {
        return HealthJson.write(root);
      }
      root.put("maxAgeSeconds", maxAgeSeconds());
      root.put("heartbeatTable", cfg.heartbeatTable());

      Map<String, Object> pm = serverJson(primary);
      Map<String, Object> hb = new LinkedHashMap<>();
      hb.put("state", primary.isPrimary() ? beatWord(primary.beat) : null);
      hb.put("ageSeconds", primary.beatSeconds);
      hb.put("staleAfterSeconds", staleAfterSeconds());
      hb.put("fresh", primary.beat == Beat.OK && primary.beatSeconds <= staleAfterSeconds());
      hb.put("error", primary.beatError);
      Object holder = null;
      if (primary.writerLock != null) {
        for (Map<String, Object> row : primary.writerLock.toJson()) {
          if (Boolean.TRUE.equals(row.get("granted"))) {
            holder = row;
          }
        }
      }
      hb.put("writerLockHolder", holder);
      pm.put("heartbeat", hb);
      pm.put("replication", rows(primary.replication));
      pm.put("replicationSlots", rows(primary.slots));
      tail(pm, primary);
      root.put("primary", pm);

      List<Object> rs = new ArrayList<>();
      for (HealthServer r : replicas) {
        Map<String, Object> m = serverJson(r);
        m.put("address", r.address);
        m.put("replayPaused", r.replayPaused);
        m.put("walReceiver", r.walReceiver);
        m.put("heartbeatState", r.reachable ? beatWord(r.beat) : null);
        m.put("lagSeconds", r.beatSeconds);
        m.put("lagOverSeconds", r.lagOver); // true: the lag is more than lagSeconds
        m.put("lagError", r.lagError);
        m.put("fresh", isFresh(r));
        m.put("heartbeatError", r.beatError);
        m.put("replayBehindBytes", replayBehind(r));
        tail(m, r);
        rs.add(m);
      }
      root.put("replicas", rs);
      List<Object> as = new ArrayList<>();
      for (HealthServer a : addresses) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("address", a.address);
        m.put("serversFound", a.serversBehind);
        m.put("connects", a.connectsTried);
        List<Object> names = new ArrayList<>();
        for (HealthServer s : replicas) {
          if (s.address.equals(a.address)) {
            names.add(s.label);
          }
        }
        m.put("servers", names);
        as.add(m);
      }
      root.put("replicaAddresses", as);

      Map<String, Object> lt = new LinkedHashMap<>();
      lt.put("server", heavyOn == null ? null : heavyOn.label);
      lt.put("endpoint", heavyOn == null ? null : heavyOn.endpoint);
      lt.put("why", heavyWhy);
      lt.put("error", largestTablesError);
      lt.put("tables", rows(largestTables));
      root.put("largestTables", lt);
      root.put("retention", primary.retention == null ? null : primary.retention.json());
      return HealthJson.write(root);
    }

    private Map<String, Object> serverJson(HealthServer s) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("server", s.label);
      m.put("endpoint", s.endpoint);
      m.put("reachable", s.reachable);
      m.put("error", s.error);
      m.put("serverVersion", s.version);
      m.put("inRecovery", s.inRecovery);
      m.put("walLsn", s.walLsn);
      m.put("systemIdentifier", s.identity == null ? null : s.identity.systemIdentifier);
      m.put("timeline", s.identity == null || !s.identity.known() ? null : s.identity.timeline);
      if (s != primary && s.isStandby()) m.put("identity", verdict(s).toString());
      m.put("clientConnections", s.clientConnections);
      m.put("maxConnections", s.maxConnections);
      boolean clock = s.reachable && s.clockOffset.known();
      m.put("clockOffsetSeconds", clock ? s.clockOffset.offsetMicros() / 1e6 : null);
      m.put("clockOffsetUncertaintySeconds",
          clock ? s.clockOffset.uncertaintyMicros() / 1e6 : null);
      return m;
    }

    private void tail(Map<String, Object> m, HealthServer s) {
      m.put("connections", rows(s.connections));
      m.put("oldestTransactions", rows(s.oldestTransactions));
      m.put("idleInTransaction", rows(s.idleInTransaction));
      m.put("lockWaits", rows(s.lockWaits));
      m.put("unreadSections", s.sectionErrors);
    }

    private static Object rows(HealthTable t) {
      return t == null ? null : t.toJson();
    }

    // ---- helpers ----

    /** Bytes of WAL the primary wrote that the replica has not replayed; null when unknown. */
    private Long replayBehind(HealthServer r) {
      if (!primary.isPrimary() || primary.walLsn == null || r.walLsn == null) {
        return null;
      }
      try {
        long d = Lsn.parse(primary.walLsn) - Lsn.parse(r.walLsn);
        return Math.max(0, d); // read a moment apart: a fast replica may be "ahead"
      } catch (IllegalArgumentException e) {
        return null;
      }
    }

    private List<HealthServer> servers() {
      List<HealthServer> all = new ArrayList<>();
      all.add(primary);
      all.addAll(replicas);
      return all;
    }

    private void add(Severity severity, String where, String message) {
      problems.add(new Problem(severity, where, message));
    }

    /** "2 servers found in 5 connects (at most 8; each checked on its own)". */
    private static String behindText(HealthServer a) {
      if (a.connectsTried == 0) {
        return "not reached";
      }
      if (a.server == null) {
        return "1 server (which one could not be read)";
      }
      return a.serversBehind + (a.serversBehind == 1 ? " server" : " servers") + " found in "
          + a.connectsTried + (a.connectsTried == 1 ? " connect" : " connects") + " (at most "
          + CheckEndpoint.MAX_CONNECTS + ", until one repeats " + CheckEndpoint.REPEATS
          + " times)" + (a.serversBehind > 1 ? ": a reader endpoint, each server checked on its"
          + " own" : "");
    }

    private static String lagText(HealthServer r) {
      return (r.lagOver ? ">" : "") + HealthTable.seconds(r.beatSeconds);
    }

    /** {@code +3.002s ±0.001s}. */
    private static String offsetText(ClockOffset o) {
      return String.format(Locale.ROOT, "%+.3fs ±%.3fs", o.offsetMicros() / 1e6,
          o.uncertaintyMicros() / 1e6);
    }

    private static String where(HealthServer s) {
      return s.label + " " + s.endpoint;
    }

    private static String beatWord(Beat b) {
      switch (b) {
        case OK:
          return "ok";
        case NO_TABLE:
          return "no table";
        case NO_ROW:
          return "no row";
        case BAD_TABLE:
          return "bad table";
        case NOT_READ:
          return "not read";
        default:
          return "error";
      }
    }

    private void collectSecrets(Properties p) {
      if (p == null) {
        return;
      }
      for (String k : p.stringPropertyNames()) {
        String v = p.getProperty(k);
        if (Secrets.isSecretKey(k) && v != null && v.length() >= 6) {
          secrets.add(v);
        }
      }
    }

    /** Last line of defence: a configured secret never leaves, even inside a server message. */
    String scrub(String text) {
      String s = text;
      for (String secret : secrets) {
        s = s.replace(secret, Secrets.MASK);
      }
      return s;
    }
  }

  private static void heading(StringBuilder out, String title) {
    out.append('\n').append(title).append('\n');
  }

  private static String pad(String s, int width) {
    return s.length() >= width ? s + " " : s + " ".repeat(width - s.length());
  }

  private static String join(List<HostSpec> hosts) {
    StringBuilder sb = new StringBuilder();
    for (HostSpec h : hosts) {
      sb.append(sb.length() == 0 ? "" : ",").append(h);
    }
    return sb.toString();
  }

  /** {@code 250ms}, {@code 5s}, {@code 1.5s}. */
  static String duration(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + "ms";
    }
    return ms % 1000 == 0 ? ms / 1000 + "s" : (ms / 1000.0) + "s";
  }
}
