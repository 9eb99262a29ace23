package dev.omnium.conformance;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Compares a candidate's observation with pgjdbc's, entry by entry. Equal, or one of two narrow
 * exceptions: a {@link Observation.Kind#WHERE} entry of a read-only connection may name another
 * node of the cluster and carry omnium's route suffix (the read ran elsewhere: that is the
 * product), and an entry listed in {@link KnownDifferences} (each with its reason).
 */
final class Comparison {
  /** pgjdbc's read: on the primary, under the session's application_name. */
  private static final Pattern BASE_READ =
      Pattern.compile("ro=true node=primary recovery=false app=(.*)");
  /** omnium's read: the fallback route on the primary, or a replica in recovery. */
  private static final String FALLBACK = "ro=true node=primary recovery=false app=";
  private static final Pattern REPLICA =
      Pattern.compile("ro=true node=replica[0-9]+ recovery=true app=(.*)");

  /** @return the exception a baseline program let escape: the scenario itself is wrong */
  static String escaped(Observation base) {
    for (Observation.Entry e : base.entries()) {
      if (e.key().equals("escaped")) {
        return e.value();
      }
    }
    return null;
  }

  /** The outcome of one scenario in one mode. */
  record Result(String mode, String scenario, List<String> mismatches, List<String> known,
      List<String> raw) {
    boolean agrees() {
      return mismatches.isEmpty();
    }
  }

  /** The key of a known difference that makes the programs take another path. */
  static final String DIVERGED = "#diverged";

  private Comparison() { }

  static Result compare(String mode, String scenario, Observation base, Observation candidate) {
    List<String> mismatches = new ArrayList<>();
    List<String> known = new ArrayList<>();
    List<String> raw = new ArrayList<>();
    List<Observation.Entry> b = base.entries();
    List<Observation.Entry> c = candidate.entries();
    int n = Math.max(b.size(), c.size());
    for (int i = 0; i < n; i++) {
      Observation.Entry be = i < b.size() ? b.get(i) : null;
      Observation.Entry ce = i < c.size() ? c.get(i) : null;
      if (be == null || ce == null || !be.key().equals(ce.key()) || be.kind() != ce.kind()) {
        String line = "#" + i + " the programs diverged: pgjdbc " + be + " | " + mode + " " + ce;
        String reason = KnownDifferences.reason(mode, scenario, DIVERGED, String.valueOf(be),
            String.valueOf(ce));
        if (reason != null) {
          known.add(line + " (known: " + reason + ")");
        } else {
          mismatches.add(line);
          raw.add(raw(mode, scenario, DIVERGED, String.valueOf(be), String.valueOf(ce)));
        }
        break;
      }
      if (same(be, ce)) {
        continue;
      }
      String reason = KnownDifferences.reason(mode, scenario, be.key(), be.value(), ce.value());
      String line = be.kind() + " " + be.key() + ": pgjdbc=" + be.value() + " " + mode + "="
          + ce.value();
      if (reason != null) {
        known.add(line + " (known: " + reason + ")");
      } else {
        mismatches.add(line);
        raw.add(raw(mode, scenario, be.key(), be.value(), ce.value()));
      }
    }
    return new Result(mode, scenario, mismatches, known, raw);
  }

  /** One mismatch as a tab-separated line (target/conformance-mismatches.tsv). */
  private static String raw(String mode, String scenario, String key, String base, String other) {
    return String.join("\t", mode, scenario, Observation.escape(key), Observation.escape(base),
        Observation.escape(other));
  }

  private static boolean same(Observation.Entry base, Observation.Entry candidate) {
    if (String.valueOf(base.value()).equals(String.valueOf(candidate.value()))) {
      return true;
    }
    if (base.kind() != Observation.Kind.WHERE || base.value() == null
        || candidate.value() == null) {
      return false;
    }
    Matcher b = BASE_READ.matcher(base.value());
    if (!b.matches()) {
      return false;
    }
    String app = b.group(1);
    if (candidate.value().equals(FALLBACK + app + ":fallback")) {
      return true;
    }
    Matcher r = REPLICA.matcher(candidate.value());
    return r.matches() && (r.group(1).equals(app) || r.group(1).equals(app + ":replica"));
  }
}
