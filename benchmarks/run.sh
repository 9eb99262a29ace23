#!/usr/bin/env bash
# The one command behind docs/performance.md AND the README's performance summary, from one run:
#   1. builds the JMH uber-jar with the driver and sandbox from this checkout (skip with SKIP_BUILD=1;
#      nothing is installed into ~/.m2),
#   2. runs every JMH benchmark (each trial starts its own PostgreSQL 18 primary + replica) with -prof gc,
#      writing benchmarks/results/<date>.json,
#   3. counts round trips on the wire and the stale-replica fallback cap (dev.omnium.bench.RoundTrips),
#      including writes with readYourWrites=thread and autocommit reads every 600 ms,
#      writing benchmarks/results/<date>-roundtrips.md,
#   4. runs case 1 with the contenders interleaved in paired rounds at 1, 4, 16 and 64 threads, and write
#      transactions with readYourWrites=thread against off (dev.omnium.bench.Interleaved: drifting load
#      cancels out of the ratios; the rounds spread over 8 forks, each a JVM and a cluster of its own, so that
#      one JVM's compilation or one cluster's state does not move every round alike; each warm-up lasts
#      until the JIT has compiled nothing for 2 s, so no contender is measured while its code is still
#      being compiled), writing benchmarks/results/<date>-interleaved.md,
#   5. records where the client cost of a read-only transaction goes with Java Flight Recorder
#      (dev.omnium.bench.Profile), writing benchmarks/results/<date>-profile.md, every allocation of one
#      by site (Profile --sites, a JVM without TLABs), and the client's CPU kernel included with Linux perf's
#      cpu-clock event at 1 and 4 threads (dev.omnium.bench.KernelProfile; says so where perf cannot
#      record), both appended to it,
#   6. runs case 9, omnium through PgBouncer next to plain pgjdbc through the same bouncer, in transaction and
#      session pooling (dev.omnium.bench.PgBouncerCase: round trips and logins counted, read-only transactions
#      in paired rounds), writing benchmarks/results/<date>-pgbouncer.md,
#   7. regenerates docs/performance.md (dev.omnium.bench.Report, plus benchmarks/ANALYSIS.md) and the
#      README's performance summary, benchmarks/results/README-performance.md, from the same files.
# The measuring JVMs (JMH's forks too) run with a fixed, pre-touched heap: a growing heap's first
# touch of each page is a page fault, about one per two transactions here, whose kernel time lands on
# whichever contender happened to allocate then; a long-running service's heap has long been touched.
# An idle vCPU polls before it halts while the run measures (benchmarks/halt-poll.sh; HALT_POLL_NS=keep
# leaves the machine alone).
# Expected duration on an idle 2-core machine: 17–25 minutes (JMH ~8, round trips ~1.5,
# interleaved in 8 forks ~11, profiles ~3; the run of 2026-12-02 08:13 UTC took 901 s, the one of 13:43 UTC, with the longer profile, 1255 s on a slower machine, the one of 18:22 UTC, with the perf profile, 1299 s, the one of 20:24 UTC, with 8 forks and perf at 4 threads too, 1423 s); more when other work shares the machine (QUICK=1 took 15 minutes on
# a machine shared by eight builds). Override the JMH settings
# with JMH_ARGS="...", or pass a benchmark regex and JMH options as arguments (they replace the
# defaults). QUICK=1: a short run of every step (a few minutes) to check the tooling, not to measure.
# REPORT_ONLY=1: measure nothing; regenerate docs/performance.md and the README block from the newest
# full run in benchmarks/results (benchmarks/fleet.sh does this after its own run).
# Section 10 (a fleet of processes) comes from the newest benchmarks/results/<date>-fleet.md, which
# benchmarks/fleet.sh writes (about 45 minutes of its own: not part of this run).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jar=benchmarks/target/benchmarks.jar
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  mvn -B -q -pl benchmarks -am package -DskipTests
fi
date="$(date -u +%Y-%m-%d)"
results=benchmarks/results
docs=docs/performance.md
if [[ "${QUICK:-0}" == 1 ]]; then
  # a tooling check: nothing it writes is a measurement, so it stays out of results/ and docs/
  results=benchmarks/target/quick
  docs="$results/performance.md"
fi
mkdir -p "$results" benchmarks/target
fleet="$(ls benchmarks/results/*-fleet.md 2>/dev/null | sort | tail -n 1 || true)"
# ScalingBenchmark.threads01 is case 1's work on one thread again: the report converts case 1 instead.
if [[ "${QUICK:-0}" == 1 ]]; then
  jmh_default="-f 1 -wi 0 -i 1 -r 500ms -prof gc -e ScalingBenchmark.threads0[14]|decideClockGiven|TracingBenchmark"
  rt_args=(--tx 100)
  il_args=(--rounds 10 --block 20 --warm-rounds 2 --threads 1,4,16,64 --ryw-rounds 10 --forks 2)
  profile_args=(--tx 2000)
  alloc_args=(--tx 100)
  kernel_args=(--rounds 10 --block 10 --warm-rounds 2 --threads 1,4)
  bouncer_args=(--tx 100 --rounds 10 --block 10 --warm-rounds 2)
  export OMNIUM_BENCH_WARM_ROUNDS=1
else
  jmh_default="-f 1 -wi 2 -w 1s -i 5 -r 1s -prof gc -e ScalingBenchmark.threads01|TracingBenchmark"
  rt_args=(--tx 1000)
  il_args=(--rounds 2400 --block 50 --warm-rounds 40 --warm-quiet-ms 2000 --threads 1,4,16,64 --ryw-rounds 1500 --forks 8)
  profile_args=(--tx 150000)
  alloc_args=(--tx 2000)
  kernel_args=(--rounds 400 --block 50 --warm-rounds 40 --warm-quiet-ms 2000 --threads 1,4)
  bouncer_args=(--tx 1000 --rounds 600 --block 50 --warm-rounds 20 --warm-quiet-ms 2000)
fi
jmh_args="${JMH_ARGS:-$jmh_default}"
heap=(-Xms2g -Xmx2g -XX:+AlwaysPreTouch)
if [[ "${REPORT_ONLY:-0}" != 1 ]]; then
  # shellcheck source=benchmarks/halt-poll.sh
  source benchmarks/halt-poll.sh
fi
if [[ $# -gt 0 ]]; then jmh_args="$*"; fi
report() { # $1: the results prefix of the run, e.g. benchmarks/results/2026-12-03
  # case 9 of the run, else the newest committed one (REPORT_ONLY: an earlier run's)
  local bouncer_file="$1-pgbouncer.md"
  if [[ ! -f "$bouncer_file" ]]; then
    bouncer_file="$(ls benchmarks/results/*-pgbouncer.md 2>/dev/null | sort | tail -n 1 || true)"
  fi
  java -cp "$jar" dev.omnium.bench.Report --results "$1.json" --roundtrips "$1-roundtrips.md" \
    --interleaved "$1-interleaved.md" --profile "$1-profile.md" ${bouncer_file:+--pgbouncer "$bouncer_file"} \
    ${fleet:+--fleet "$fleet"} \
    --analysis benchmarks/ANALYSIS.md --out "$docs" --readme-out "$results/README-performance.md" \
    --settings "$jmh_args" --command "benchmarks/run.sh"
}
if [[ "${REPORT_ONLY:-0}" == 1 ]]; then
  latest="$(ls "$results"/*-interleaved.md | sort | tail -n 1)"
  report "${latest%-interleaved.md}"
  exit 0
fi
start=$SECONDS
# shellcheck disable=SC2086
java -jar "$jar" $jmh_args -rf json -rff "$results/$date.json" 2>&1 | tee benchmarks/target/jmh-$date.log
echo "benchmarks: JMH done after $((SECONDS - start)) s"
rt=0
java -cp "$jar" dev.omnium.bench.RoundTrips "${rt_args[@]}" --out "$results/$date-roundtrips.md" || rt=$?
echo "benchmarks: round trips done after $((SECONDS - start)) s"
java "${heap[@]}" -cp "$jar" dev.omnium.bench.Interleaved "${il_args[@]}" --out "$results/$date-interleaved.md"
echo "benchmarks: interleaved done after $((SECONDS - start)) s"
java "${heap[@]}" -cp "$jar" dev.omnium.bench.Profile "${profile_args[@]}" --out "$results/$date-profile.md"
# the exact allocation of each layer (every allocation recorded, no TLAB): appended to the profile
java "${heap[@]}" -XX:-UseTLAB -cp "$jar" dev.omnium.bench.Profile --sites "${alloc_args[@]}" --out "$results/$date-allocation.md"
cat "$results/$date-allocation.md" >> "$results/$date-profile.md"
# where the client's CPU goes with the kernel's frames (perf cpu-clock): appended to the profile too
java "${heap[@]}" -cp "$jar" dev.omnium.bench.KernelProfile "${kernel_args[@]}" --out "$results/$date-kernel.md"
cat "$results/$date-kernel.md" >> "$results/$date-profile.md"
echo "benchmarks: profile and allocation sites done after $((SECONDS - start)) s"
bouncer=0
java "${heap[@]}" -cp "$jar" dev.omnium.bench.PgBouncerCase "${bouncer_args[@]}" --out "$results/$date-pgbouncer.md" \
  || bouncer=$?
echo "benchmarks: PgBouncer case done after $((SECONDS - start)) s"
report "$results/$date"
# later: java -cp "$jar" dev.omnium.bench.Report ... --check-readme README.md (same inputs) tells whether the
# README holds this block
echo "benchmarks: done in $((SECONDS - start)) s: $results/$date.json, $results/$date-roundtrips.md," \
  "$results/$date-interleaved.md, $results/$date-profile.md, $docs," \
  "$results/README-performance.md (paste it under the README's '## Performance' heading)"
if [[ $rt -ne 0 ]]; then echo "benchmarks: the round-trip check reported a missed target (exit $rt)" >&2; fi
if [[ $bouncer -ne 0 ]]; then echo "benchmarks: the PgBouncer case reported a missed target (exit $bouncer)" >&2; fi
