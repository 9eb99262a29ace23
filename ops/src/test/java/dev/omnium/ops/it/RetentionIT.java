package dev.omnium.ops.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.ops.Retention;
import dev.omnium.ops.RetentionReport;
import dev.omnium.ops.RetentionReport.Verb;
import dev.omnium.ops.RetentionRule;
import dev.omnium.ops.RetentionRules;
import dev.omnium.sandbox.testkit.PgSandbox;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The daily run on a real primary (PostgreSQL 18 and 15): months of rows spread over time, a
 * second run, a hold, a default partition with rows, a delete rule's batches, a dry run, bad
 * rules. What the server holds afterwards is asserted, not only what the report says.
 */
class RetentionIT {
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(0).withoutHeartbeat().build();

  static final LocalDate TODAY = LocalDate.of(2026, 12, 4);

  static Retention.Builder retention(String rules) {
    return Retention.builder(SANDBOX.primary().jdbcUrl(), props())
        .rules(RetentionRules.parse("test.rules", rules));
  }

  static Properties props() {
    Properties p = new Properties();
    p.setProperty("user", SANDBOX.cluster().user());
    if (SANDBOX.password() != null) {
      p.setProperty("password", SANDBOX.password());
    }
    return p;
  }

  @Test
  void oldMonthsAreDroppedMonthsAheadCreatedAndNoYoungerRowIsTouched() throws Exception {
    Db.monthlyTable(SANDBOX, "events", "2025-09", 16); // 2025-09 .. 2026-12
    Db.rows(SANDBOX, "events", "2025-09-01", "2027-01-01", "7 hours");
    // keep 90d from 2026-12-04: every row older than 2026-09-05 may go, so months up to August.
    String younger = "SELECT count(*) FROM events WHERE at >= '2026-09-01 00:00:00+00'";
    long keptBefore = Db.count(SANDBOX, younger);
    List<Long> perMonth = new ArrayList<>();
    for (int m = 0; m < 12; m++) {
      perMonth.add(Db.count(SANDBOX, "SELECT count(*) FROM events_" + LocalDate.of(2025, 9, 1)
          .plusMonths(m).toString().substring(0, 7).replace('-', '_')));
    }

    RetentionReport report = retention("events month at 90d").build().run(TODAY);

    assertEquals(RetentionReport.OK, report.exitCode(), report.text());
    assertEquals(List.of("events_2026_09", "events_2026_10", "events_2026_11", "events_2026_12",
        "events_2027_01", "events_2027_02", "events_2027_03"), Db.partitions(SANDBOX, "events"));
    assertEquals(keptBefore, Db.count(SANDBOX, younger), "a row younger than the cut was lost");
    assertEquals(keptBefore, Db.count(SANDBOX, "SELECT count(*) FROM events"));
    // the month's bounds are UTC midnights: its last microsecond lands in it
    assertEquals("events_2027_03", SANDBOX.queryOne(SANDBOX.primary(), "WITH i AS (INSERT INTO"
        + " events (at) VALUES ('2027-03-31 23:59:59.999999+00') RETURNING tableoid::regclass)"
        + " SELECT tableoid FROM i"));
    SANDBOX.execOnPrimary("DELETE FROM events WHERE at >= '2027-01-01'");
    // no detached leftovers: the dropped months are gone from the catalog
    assertEquals("0", SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM pg_class"
        + " WHERE relname ~ '^events_(2025_|2026_0[1-8])'"));

    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      expected.add("created|public.events_2027_0" + (i + 1) + "|");
    }
    for (int m = 0; m < 12; m++) {
      String name = "public.events_" + LocalDate.of(2025, 9, 1).plusMonths(m).toString()
          .substring(0, 7).replace('-', '_');
      expected.add("detached|" + name + "|" + perMonth.get(m));
      expected.add("dropped|" + name + "|" + perMonth.get(m));
    }
    assertEquals(expected, Db.log(SANDBOX, "events"));
    assertEquals(12, report.actions(Verb.DROPPED).size());
    assertTrue(report.actions(Verb.DETACHED).get(0).detail().contains("concurrently"));

    // The same day again: nothing to do, and only that is logged.
    long logBefore = Db.logRows(SANDBOX);
    RetentionReport second = retention("events month at 90d").build().run(TODAY);
    assertEquals(RetentionReport.OK, second.exitCode(), second.text());
    assertEquals(List.of(Verb.NOTHING_TO_DO), verbs(second));
    assertEquals(logBefore + 1, Db.logRows(SANDBOX));
    assertEquals("nothing to do", SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT action FROM omnium_retention_log ORDER BY id DESC LIMIT 1"));
    assertEquals(7, Db.partitions(SANDBOX, "events").size());
  }

  @Test
  void aHeldTableKeepsItsMonthsUntilReleasedAndEveryStepIsLogged() throws Exception {
    Db.monthlyTable(SANDBOX, "disputed", "2026-01", 15); // 2026-01 .. 2027-03
    Db.rows(SANDBOX, "disputed", "2026-01-01", "2026-12-05", "1 day");
    Retention r = retention("disputed month at 30d").build();
    String rows = SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM disputed");

    Retention.HoldResult held = r.hold("disputed", "match 812 disputed", "alice");
    assertTrue(held.changed(), held.message());
    assertFalse(r.hold("disputed", "again", "bob").changed(), "a second hold changes nothing");

    RetentionReport report = r.run(TODAY);
    assertEquals(RetentionReport.HELD_OR_PROBLEM, report.exitCode(), report.text());
    assertEquals(10, report.actions(Verb.SKIPPED_HELD).size(), report.text()); // 2026-01 .. 10
    assertTrue(report.actions(Verb.SKIPPED_HELD).get(0).detail()
        .contains("held by alice since"), report.text());
    assertEquals(15, Db.partitions(SANDBOX, "disputed").size());
    assertEquals(rows, SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM disputed"));

    long logBefore = Db.logRows(SANDBOX);
    RetentionReport again = r.run(TODAY);
    assertEquals(RetentionReport.HELD_OR_PROBLEM, again.exitCode(), again.text());
    assertEquals(logBefore + 1, Db.logRows(SANDBOX), "a skip is logged once a day");

    assertTrue(r.release("disputed", "alice").changed());
    assertFalse(r.release("disputed", "alice").changed(), "releasing twice changes nothing");
    RetentionReport after = r.run(TODAY);
    assertEquals(RetentionReport.OK, after.exitCode(), after.text());
    assertEquals(10, after.actions(Verb.DROPPED).size());
    assertEquals(5, Db.partitions(SANDBOX, "disputed").size());

    List<String> log = Db.log(SANDBOX, "disputed");
    assertEquals("hold||", log.get(0));
    assertEquals(10, log.stream().filter(l -> l.startsWith("skipped: held|")).count(), log
        .toString());
    assertTrue(log.contains("release||"), log.toString());
    assertEquals(10, log.stream().filter(l -> l.startsWith("dropped|")).count());
    assertEquals("alice", SANDBOX.queryOne(SANDBOX.primary(), "SELECT actor FROM"
        + " omnium_retention_log WHERE action = 'hold' AND table_name = 'public.disputed'"));
  }

  @Test
  void rowsInADefaultPartitionAreAProblemWithCountsAndAreNeverDropped() throws Exception {
    Db.monthlyTable(SANDBOX, "landing", "2026-06", 2); // 2026-06, 2026-07
    SANDBOX.execOnPrimary("CREATE TABLE landing_default PARTITION OF landing DEFAULT");
    Db.rows(SANDBOX, "landing", "2026-06-01", "2026-08-01", "1 day"); // 61 in their months
    Db.rows(SANDBOX, "landing", "2026-12-01", "2026-12-04", "1 day"); // 3 in default, this month
    Db.rows(SANDBOX, "landing", "2025-01-01", "2025-01-03", "1 day"); // 2 in default, old

    RetentionReport report = retention("landing month at 30d").build().run(TODAY);

    assertEquals(RetentionReport.HELD_OR_PROBLEM, report.exitCode(), report.text());
    List<RetentionReport.Action> problems = report.actions(Verb.PROBLEM);
    assertEquals(2, problems.size(), report.text());
    assertTrue(problems.get(0).detail().startsWith("1 of 4 months from 2026-12 have no"
        + " partition: 2026-12 (3 of its rows are in the default partition"), report.text());
    assertEquals(5L, problems.get(1).rows());
    assertTrue(problems.get(1).detail().contains("2025-01: 2, 2026-12: 3"), report.text());
    // 2027-01..03 created; the old months dropped (detached without CONCURRENTLY: PostgreSQL
    // refuses it with a default partition); the default partition and its rows stay.
    assertEquals(List.of("landing_2027_01", "landing_2027_02", "landing_2027_03",
        "landing_default"), Db.partitions(SANDBOX, "landing"));
    assertEquals("5", SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM landing"));
    assertTrue(report.actions(Verb.DETACHED).get(0).detail().startsWith("not concurrently"),
        report.text());
    List<String> log = Db.log(SANDBOX, "landing");
    assertEquals(2, log.stream().filter(l -> l.startsWith("problem|")).count(), log.toString());
  }

  @Test
  void aDeleteRuleTrimsInBatchesEachItsOwnTransaction() throws Exception {
    SANDBOX.execOnPrimary("CREATE TABLE jobs (id bigserial PRIMARY KEY, finished_at timestamptz"
        + " NOT NULL, status text NOT NULL)",
        "CREATE INDEX ON jobs (finished_at)",
        "INSERT INTO jobs (finished_at, status) SELECT timestamptz '2026-11-01 00:00:00+00'"
            + " - g * interval '1 second', 'succeeded' FROM generate_series(1, 25000) g",
        "INSERT INTO jobs (finished_at, status) SELECT timestamptz '2026-11-01 00:00:00+00',"
            + " 'failed' FROM generate_series(1, 100)",
        "INSERT INTO jobs (finished_at, status) SELECT timestamptz '2026-12-03 00:00:00+00',"
            + " 'succeeded' FROM generate_series(1, 100)",
        // the server's own record of each DELETE statement: its transaction and its rows
        "CREATE TABLE jobs_deletes (xid xid8, n bigint)",
        "CREATE FUNCTION jobs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " INSERT INTO jobs_deletes SELECT pg_current_xact_id(), count(*) FROM gone;"
            + " RETURN NULL; END $$",
        "CREATE TRIGGER jobs_deleted AFTER DELETE ON jobs REFERENCING OLD TABLE AS gone"
            + " FOR EACH STATEMENT EXECUTE FUNCTION jobs_deleted()");

    RetentionReport report = retention("jobs delete finished_at 7d where status = 'succeeded'")
        .build().run(TODAY);

    assertEquals(RetentionReport.OK, report.exitCode(), report.text());
    assertEquals(25000L, report.actions(Verb.TRIMMED).get(0).rows());
    assertEquals("200", SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM jobs"));
    assertEquals(List.of("10000", "10000", "5000"), Db.list(SANDBOX,
        "SELECT n FROM jobs_deletes WHERE n > 0 ORDER BY xid"));
    assertEquals("3", SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT count(DISTINCT xid) FROM jobs_deletes WHERE n > 0"));
    assertEquals(List.of("trimmed||25000"), Db.log(SANDBOX, "jobs"));
  }

  @Test
  void aDryRunPrintsThePlanAndChangesNothing() throws Exception {
    // Its own schema first on the search path, so that even the ops tables are seen not to exist.
    SANDBOX.execOnPrimary("CREATE SCHEMA dry");
    SANDBOX.execOnPrimary("SET search_path = dry",
        "CREATE TABLE dry.plans (at date NOT NULL) PARTITION BY RANGE (at)",
        "CREATE TABLE dry.plans_2026_01 PARTITION OF dry.plans FOR VALUES FROM ('2026-01-01')"
            + " TO ('2026-02-01')",
        "CREATE TABLE dry.plans_2026_12 PARTITION OF dry.plans FOR VALUES FROM ('2026-12-01')"
            + " TO ('2027-01-01')",
        "INSERT INTO dry.plans SELECT date '2026-01-01' + g FROM generate_series(0, 30) g",
        "CREATE TABLE dry.trims (at timestamp NOT NULL)",
        "INSERT INTO dry.trims SELECT timestamp '2026-01-01' FROM generate_series(1, 7)");
    String snapshot = "SELECT string_agg(c.relname || ':' || c.relkind::text, ','"
        + " ORDER BY c.relname)"
        + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname"
        + " IN ('dry', 'public') AND c.relname LIKE ANY (ARRAY['plans%', 'trims%', 'omnium%'])";
    String before = SANDBOX.queryOne(SANDBOX.primary(), snapshot);
    String url = SANDBOX.primary().jdbcUrl() + "?currentSchema=dry";

    RetentionReport plan = Retention.builder(url, props())
        .rules(List.of(RetentionRule.month("plans", "at", 30),
            RetentionRule.delete("trims", "at", 30, null))).build().plan(TODAY);

    assertTrue(plan.dryRun());
    assertEquals(RetentionReport.OK, plan.exitCode(), plan.text());
    assertEquals(3, plan.actions(Verb.CREATED).size(), plan.text());
    assertEquals("dry.plans_2026_01", plan.actions(Verb.DROPPED).get(0).partition());
    assertEquals(31L, plan.actions(Verb.DROPPED).get(0).rows());
    assertEquals(7L, plan.actions(Verb.TRIMMED).get(0).rows());
    assertTrue(plan.text().contains("would be created    dry.plans_2027_01: FOR VALUES FROM"
        + " ('2027-01-01') TO ('2027-02-01')"), plan.text());
    assertEquals(before, SANDBOX.queryOne(SANDBOX.primary(), snapshot));
    assertEquals("7", SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM dry.trims"));
    assertEquals(null, SANDBOX.queryOne(SANDBOX.primary(),
        "SELECT to_regclass('dry.omnium_retention_log')"));
  }

  @Test
  void aBadRuleIsAnErrorNamingItsLineAndNothingRuns() throws Exception {
    SANDBOX.execOnPrimary("CREATE TABLE plain (at timestamptz NOT NULL)",
        "INSERT INTO plain VALUES ('2020-01-01')");
    long logBefore = Db.logRows(SANDBOX);
    RetentionReport report = retention(String.join("\n",
        "plain delete at 30d",
        "plain month at 30d",
        "nosuch delete at 30d",
        "plain delete nosuch 30d",
        "plain delete at 30d where nosuch = 1")).build().run(TODAY);
    assertEquals(RetentionReport.ERROR, report.exitCode(), report.text());
    List<String> errors = new ArrayList<>();
    report.actions(Verb.ERROR).forEach(a -> errors.add(a.detail()));
    assertEquals(4, errors.size(), report.text());
    assertTrue(errors.get(0).startsWith("test.rules:2 ('plain month at 30d'): public.plain is not"
        + " partitioned"), errors.get(0));
    assertTrue(errors.get(1).startsWith("test.rules:3"), errors.get(1));
    assertTrue(errors.get(2).contains("has no column nosuch"), errors.get(2));
    assertTrue(errors.get(3).contains("bad where condition"), errors.get(3));
    assertEquals("1", SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM plain"),
        "a good rule did not run either");
    assertEquals(logBefore, Db.logRows(SANDBOX));
  }

  @Test
  void oneProcessOfAFleetRunsTheDailyRun() throws Exception {
    Db.monthlyTable(SANDBOX, "fleet", "2026-12", 1);
    Retention r = retention("fleet month at 30d").build();
    // Somebody else holds the run: nothing is done, nothing logged.
    r.run(TODAY.minusDays(1)); // the tables and the lease row exist from here on
    SANDBOX.execOnPrimary("UPDATE omnium_retention_lease SET holder = 'other@host pid 1',"
        + " token = 'other', expires_at = now() + interval '1 minute', done_day = NULL");
    long logBefore = Db.logRows(SANDBOX);
    RetentionReport refused = r.run(TODAY);
    assertEquals(List.of(Verb.NOT_ELECTED), verbs(refused), refused.text());
    assertTrue(refused.actions().get(0).detail().contains("other@host pid 1"));
    assertEquals(RetentionReport.HELD_OR_PROBLEM, refused.exitCode());
    assertEquals(logBefore, Db.logRows(SANDBOX));
    SANDBOX.execOnPrimary("UPDATE omnium_retention_lease SET expires_at = now()"
        + " - interval '1 second'");

    // Eight processes at once, each asking for today's run: exactly one runs it.
    List<RetentionReport> reports = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      Retention each = retention("fleet month at 30d").holder("process " + i).build();
      Thread t = new Thread(() -> {
        RetentionReport rep = each.runIfDue(TODAY);
        synchronized (reports) {
          reports.add(rep);
        }
      });
      threads.add(t);
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(120_000);
    }
    assertEquals(8, reports.size());
    long ran = reports.stream().filter(x -> !verbs(x).contains(Verb.NOT_ELECTED)).count();
    assertEquals(1, ran, reports.toString());
    assertEquals(4, Db.partitions(SANDBOX, "fleet").size());
    // And later the same day, nobody runs it again.
    assertEquals(List.of(Verb.NOT_ELECTED), verbs(r.runIfDue(TODAY)));
    assertTrue(r.runIfDue(TODAY).actions().get(0).detail().contains("done already"));
  }

  static List<Verb> verbs(RetentionReport r) {
    List<Verb> out = new ArrayList<>();
    r.actions().forEach(a -> out.add(a.verb()));
    return out;
  }
}
