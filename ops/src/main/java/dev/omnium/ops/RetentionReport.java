package dev.omnium.ops;

import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * What one retention run did (or, for a dry run, would do): one {@link Action} per partition
 * created, detached or dropped, table trimmed, hold that stopped a drop, problem and error, in
 * the order they happened. {@link #exitCode()}: 0 when all went well, 1 when something was held
 * or a problem was reported, 2 on an error.
 */
public final class RetentionReport {
  /** Exit status: all went well. */
  public static final int OK = 0;
  /** Exit status: something was held, or a problem was reported. */
  public static final int HELD_OR_PROBLEM = 1;
  /** Exit status: an error (bad rules, no connection, a statement that failed). */
  public static final int ERROR = 2;

  /** What happened to a table or partition. */
  public enum Verb {
    /** A month partition was created. */
    CREATED("created"),
    /** A month partition was detached from its table. */
    DETACHED("detached"),
    /** A detached month partition was dropped. */
    DROPPED("dropped"),
    /** Rows of a delete rule's table were deleted. */
    TRIMMED("trimmed"),
    /** A drop or trim was not done because a hold covers the table. */
    SKIPPED_HELD("skipped: held"),
    /** Something an operator should look at (rows in a default partition, a month missing). */
    PROBLEM("problem"),
    /** A step failed. */
    ERROR("error"),
    /** The run found nothing to do. */
    NOTHING_TO_DO("nothing to do"),
    /** Another process holds the run (the fleet elected it), or ran it today already. */
    NOT_ELECTED("not elected");

    private final String word;

    Verb(String word) {
      this.word = word;
    }

    /** @return the word written to {@code omnium_retention_log.action} */
    public String word() {
      return word;
    }
  }

  /**
   * One thing the run did or would do.
   *
   * @param verb what
   * @param rule the rule it follows (its rules-file form), or null
   * @param table the table ({@code schema.name}), or null
   * @param partition the partition ({@code schema.name}), or null
   * @param rows rows concerned (dropped with a partition, deleted, found in a default
   *     partition), or null
   * @param detail a sentence for people
   * @param startedAt when the step began (this machine's clock)
   * @param finishedAt when it ended
   */
  public record Action(Verb verb, String rule, String table, String partition, Long rows,
      String detail, Instant startedAt, Instant finishedAt) { }

  private final LocalDate today;
  private final boolean dryRun;
  private final List<Action> actions = new ArrayList<>();

  RetentionReport(LocalDate today, boolean dryRun) {
    this.today = today;
    this.dryRun = dryRun;
  }

  void add(Action a) {
    actions.add(a);
  }

  /** @return the day the run took as today */
  public LocalDate today() {
    return today;
  }

  /** @return true for a dry run: the actions are the plan, nothing was changed */
  public boolean dryRun() {
    return dryRun;
  }

  /** @return every action, in order */
  public List<Action> actions() {
    return Collections.unmodifiableList(actions);
  }

  /** @return the actions of one kind */
  public List<Action> actions(Verb verb) {
    List<Action> out = new ArrayList<>();
    for (Action a : actions) {
      if (a.verb() == verb) {
        out.add(a);
      }
    }
    return out;
  }

  /** @return 0 all went well, 1 something held or a problem, 2 an error */
  public int exitCode() {
    int code = OK;
    for (Action a : actions) {
      if (a.verb() == Verb.ERROR) {
        return ERROR;
      }
      if (a.verb() == Verb.PROBLEM || a.verb() == Verb.SKIPPED_HELD
          || a.verb() == Verb.NOT_ELECTED) {
        code = HELD_OR_PROBLEM;
      }
    }
    return code;
  }

  /** @return the report for people: a status line, then one line per action */
  public String text() {
    StringBuilder out = new StringBuilder();
    String status = exitCode() == OK ? "OK" : exitCode() == ERROR ? "ERROR" : "HELD OR PROBLEM";
    out.append("omnium-ops run ").append(today).append(dryRun ? " (dry run: nothing changed)" : "")
        .append(": ").append(status).append(" (exit ").append(exitCode()).append(")\n");
    for (Action a : actions) {
      String verb = dryRun && isChange(a.verb()) ? "would be " + a.verb().word() : a.verb().word();
      out.append("  ").append(pad(verb, 20));
      String target = a.partition() != null ? a.partition() : a.table();
      if (target != null) {
        out.append(target);
      }
      if (a.rows() != null) {
        out.append(" (").append(String.format(Locale.ROOT, "%,d", a.rows())).append(" rows)");
      }
      if (a.detail() != null) {
        out.append(target == null && a.rows() == null ? "" : ": ").append(a.detail());
      }
      if (a.rule() != null) {
        out.append("  [").append(a.rule()).append(']');
      }
      out.append('\n');
    }
    return out.toString();
  }

  static boolean isChange(Verb v) {
    return v == Verb.CREATED || v == Verb.DETACHED || v == Verb.DROPPED || v == Verb.TRIMMED;
  }

  private static String pad(String s, int width) {
    return s.length() >= width ? s + " " : s + " ".repeat(width - s.length());
  }

  @Override
  public String toString() {
    return text();
  }
}
