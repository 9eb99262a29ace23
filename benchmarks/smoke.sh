#!/usr/bin/env bash
# CI smoke run of the JMH suite: every benchmark, every contender, one fork, no warm-up, one short
# iteration, so the suite keeps building and running. Not a measurement: see benchmarks/run.sh.
# Exits non-zero when any benchmark fails (JMH -foe) or a result is missing or empty. The forks run
# with C1 only and a small serial heap: less JIT work on 2 cores, and the numbers do not matter here.
# The throughput benchmark runs only at 16 threads here (1 and 4 threads run the same code), and the
# routing decision only with its clock read (decideClockGiven is the same call minus System.nanoTime()).
# About 2 minutes more run the interleaved runner, the JFR and perf breakdowns, the PgBouncer case, one process of
# each stack of the fleet benchmark and the report on tiny inputs;
# last, the README's performance summary is checked against the committed results.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.." # TracingBenchmark's fork finds the OpenTelemetry SDK under benchmarks/target
jar="$here/target/benchmarks.jar"
if [[ ! -f "$jar" ]]; then
  mvn -B -q -pl benchmarks -am package -DskipTests
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
start=$SECONDS
# 36 trials = ReadTx 5 + Scaling(16 threads) 5 + WriteTx 3 + Autocommit 5 + Stale 2x3 + Routing 4 + ReadYourWrites 3x2
# + Tracing 2
expected=36
OMNIUM_BENCH_WARM_ROUNDS=1 timeout 600 java -jar "$jar" \
  -f 1 -wi 0 -i 1 -r 500ms -foe true \
  -jvmArgsAppend "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx512m" \
  -e 'ScalingBenchmark\.threads0[14]|decideClockGiven' \
  -rf json -rff "$out/smoke.json" > "$out/jmh.log" 2>&1 || {
    rc=$?
    tail -n 80 "$out/jmh.log"
    echo "benchmarks smoke: JMH failed (exit $rc) after $((SECONDS - start)) s" >&2
    exit 1
  }
grep -E '^\[harness\]|^\[stale replica\]' "$out/jmh.log" || true
java -cp "$jar" dev.omnium.bench.Report --check "$out/smoke.json" --expect "$expected"
# The tools behind the full run keep working too: a few interleaved rounds at two thread counts (with
# the read-your-writes pair), a short JFR breakdown and a short perf one (which says so where perf cannot
# record); then the report and the README block from them.
OMNIUM_BENCH_WARM_ROUNDS=1 java -cp "$jar" dev.omnium.bench.Interleaved --rounds 2 --forks 2 --block 5 --warm-rounds 0 --threads 1,4 \
  --ryw-rounds 2 --out "$out/interleaved.md" > "$out/interleaved.log" 2>&1 || {
    tail -n 40 "$out/interleaved.log"; echo "benchmarks smoke: Interleaved failed" >&2; exit 1; }
OMNIUM_BENCH_WARM_ROUNDS=1 java -cp "$jar" dev.omnium.bench.Profile --tx 200 --out "$out/profile.md" > "$out/profile.log" 2>&1 || {
    tail -n 40 "$out/profile.log"; echo "benchmarks smoke: Profile failed" >&2; exit 1; }
OMNIUM_BENCH_WARM_ROUNDS=1 java -cp "$jar" dev.omnium.bench.KernelProfile --rounds 4 --block 5 --warm-rounds 1 --threads 1,2 \
  --out "$out/kernel.md" > "$out/kernel.log" 2>&1 || {
    tail -n 40 "$out/kernel.log"; echo "benchmarks smoke: KernelProfile failed" >&2; exit 1; }
cat "$out/kernel.md" >> "$out/profile.md"
# omnium through PgBouncer next to plain pgjdbc (transaction pooling only here): exits non-zero when omnium adds a
# round trip or a login per transaction, which are counted, not timed
OMNIUM_BENCH_WARM_ROUNDS=1 java -cp "$jar" dev.omnium.bench.PgBouncerCase --modes transaction --tx 20 --rounds 2 \
  --block 5 --warm-rounds 0 --out "$out/pgbouncer.md" > "$out/pgbouncer.log" 2>&1 || {
    tail -n 40 "$out/pgbouncer.log"; echo "benchmarks smoke: PgBouncerCase failed" >&2; exit 1; }
# The fleet benchmark (benchmarks/fleet.sh): one process of each stack, a few seconds per phase.
java -cp "$jar" dev.omnium.bench.Fleet --processes 1 --idle-settle 2s --window 2s --load-settle 1s \
  --out "$out/fleet.md" > "$out/fleet.log" 2>&1 || {
    tail -n 40 "$out/fleet.log"; echo "benchmarks smoke: Fleet failed" >&2; exit 1; }
java -cp "$jar" dev.omnium.bench.Report --results "$out/smoke.json" --interleaved "$out/interleaved.md" \
  --profile "$out/profile.md" --pgbouncer "$out/pgbouncer.md" --fleet "$out/fleet.md" --out "$out/performance.md" \
  --readme-out "$out/README-performance.md" > /dev/null
grep -q "Through PgBouncer" "$out/performance.md" || {
  echo "benchmarks smoke: the report lacks the PgBouncer case" >&2; exit 1; }
grep -q "## 10. A fleet of processes" "$out/performance.md" || {
  echo "benchmarks smoke: the report lacks the fleet section" >&2; exit 1; }
grep -q "throughput ≥ 0.97" "$out/README-performance.md" || {
  echo "benchmarks smoke: the README block lacks the throughput targets" >&2; exit 1; }
# The README's performance summary must be the block generated from the newest full run committed
# in benchmarks/results (Report --check-readme): a hand edit or a run left unpasted fails here.
latest="$(ls "$here"/results/*-interleaved.md | sort | tail -n 1)"
run="${latest%-interleaved.md}"
fleet="$(ls "$here"/results/*-fleet.md 2>/dev/null | sort | tail -n 1 || true)" # as benchmarks/run.sh takes it
java -cp "$jar" dev.omnium.bench.Report --results "$run.json" --roundtrips "$run-roundtrips.md" \
  --interleaved "$run-interleaved.md" --profile "$run-profile.md" ${fleet:+--fleet "$fleet"} --out "$out/check.md" \
  --check-readme "$here/../README.md" || {
    echo "benchmarks smoke: README.md's '## Performance' block is not the one generated from $run.*:" \
      "paste benchmarks/results/README-performance.md of that run (benchmarks/run.sh writes it)" >&2
    exit 1; }
echo "benchmarks smoke: $expected benchmarks ran in $((SECONDS - start)) s"
