"""Reads the JUnit console launcher's XML reports that run.sh leaves in REPORTS/<mode>/ and prints
each run's counts and the tests that pass on plain pgjdbc but not through omnium.

  compare.py REPORTS pgjdbc omnium replica      counts, then each mode's list against pgjdbc
  compare.py REPORTS --counts MODE              one run's counts
  compare.py REPORTS --selectors BASE MODE      console-launcher selectors (unique ids) of the
                                                tests that pass in BASE and not in MODE
  compare.py REPORTS --causes MODE              the same list with each failure's first line
  compare.py REPORTS --partial MODE             the same, for a run of some classes only: tests
                                                it did not run are left out
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def load(reports, mode):
    """{test id: (outcome, message)} with outcome passed, failed or skipped."""
    results = {}
    files = glob.glob(os.path.join(reports, mode, "TEST-*.xml"))
    if not files:
        sys.exit(f"no report in {os.path.join(reports, mode)}")
    for f in files:
        for case in ET.parse(f).getroot().iter("testcase"):
            test = unique_id(case)
            outcome, message = "passed", ""
            for kind in ("failure", "error"):
                el = case.find(kind)
                if el is not None:
                    outcome = "failed"
                    text = (el.get("message") or el.text or "").strip()
                    message = (el.get("type") or "") + ": " + text.splitlines()[0] if text else (el.get("type") or "")
            if outcome == "passed" and case.find("skipped") is not None:
                outcome = "skipped"
            results[test] = (outcome, message)
    return results


def unique_id(case):
    """The test's JUnit unique id (parameterized classes repeat names), else class#name."""
    out = case.find("system-out")
    for line in (out.text or "").splitlines() if out is not None else []:
        if line.startswith("unique-id: "):
            return line[len("unique-id: "):].strip()
    return case.get("classname", "") + "#" + case.get("name", "")


def short(test):
    """[engine:..]/[class:C]/[method:m()] as C#m(), invocations as C[#n]#m()."""
    if not test.startswith("[engine:"):
        return test
    parts = []
    for seg in test.split("/")[1:]:
        kind, _, value = seg.strip("[]").partition(":")
        if kind in ("class", "class-template", "nested-class"):
            parts.append(value.rsplit(".", 1)[-1] if parts else value)
        elif kind.endswith("-invocation"):
            parts[-1] += "[" + value + "]"
        else:
            parts.append(value)
    return "#".join(parts)


def counts(mode, results):
    n = len(results)
    by = {k: sum(1 for o, _ in results.values() if o == k) for k in ("passed", "failed", "skipped")}
    return f"{mode}: {n} tests, {by['passed']} passed, {by['failed']} failed, {by['skipped']} skipped"


def regressions(base, other):
    """Tests passing in base that fail, are skipped, or did not run in other."""
    out = []
    for test, (outcome, _) in sorted(base.items()):
        if outcome != "passed":
            continue
        got = other.get(test)
        if got is None:
            out.append((test, "did not run", ""))
        elif got[0] != "passed":
            out.append((test, got[0], got[1]))
    return out


def main(argv):
    reports = argv[1]
    if argv[2] == "--counts":
        print(counts(argv[3], load(reports, argv[3])))
        return
    if argv[2] == "--selectors":
        base, mode = load(reports, argv[3]), load(reports, argv[4])
        for t, _, _ in regressions(base, mode):
            print(f"--select-unique-id={t}")
        return
    if argv[2] in ("--causes", "--partial"):
        base, mode = load(reports, "pgjdbc"), load(reports, argv[3])
        if argv[2] == "--partial":
            classes = {t.split("/")[1] for t in mode}
            base = {t: v for t, v in base.items() if t.split("/")[1] in classes}
        for test, outcome, message in regressions(base, mode):
            print(f"{short(test)}\t{outcome}\t{message[:300]}")
        return
    modes = argv[2:]
    loaded = {m: load(reports, m) for m in modes}
    for m in modes:
        print(counts(m, loaded[m]))
    if "pgjdbc" not in loaded:
        return
    for m in modes:
        if m == "pgjdbc":
            continue
        reg = regressions(loaded["pgjdbc"], loaded[m])
        print(f"\n{len(reg)} tests pass on pgjdbc and not in mode {m}:")
        for test, outcome, message in reg:
            print(f"  {short(test)}  [{outcome}] {message[:160]}")


if __name__ == "__main__":
    main(sys.argv)
