#!/usr/bin/env bash
# The full (manual) benchmark run, the one command behind docs/performance.md:
#   1. builds driver + sandbox + the JMH uber-jar (skip with SKIP_BUILD=1),
#   2. runs every JMH benchmark (each trial starts its own PostgreSQL 18 primary + replica) with -prof gc,
#      writing benchmarks/results/<date>.json,
#   3. counts round trips and the stale-replica fallback cap (dev.omnium.bench.RoundTrips),
#      writing benchmarks/results/<date>-roundtrips.md,
#   4. runs case 1 again with the contenders interleaved in paired rounds (dev.omnium.bench.Interleaved:
#      drifting load cancels out of the ratios), writing benchmarks/results/<date>-interleaved.md,
#   5. regenerates docs/performance.md from all three (dev.omnium.bench.Report) plus benchmarks/ANALYSIS.md.
# About 10 minutes on an idle 2-core machine (15 when other work shares it). Override the JMH settings with JMH_ARGS="...",
# or pass a benchmark regex and JMH options as arguments (they replace the defaults).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jar=benchmarks/target/benchmarks.jar
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  mvn -B -q install -DskipTests -pl driver,sandbox
  mvn -B -q -pl benchmarks package
fi
date="$(date -u +%Y-%m-%d)"
results=benchmarks/results
mkdir -p "$results" benchmarks/target
# ScalingBenchmark.threads01 is case 1's work on one thread again: the report converts case 1 instead.
jmh_args="${JMH_ARGS:--f 1 -wi 2 -w 1s -i 5 -r 1s -prof gc -e ScalingBenchmark.threads01}"
if [[ $# -gt 0 ]]; then jmh_args="$*"; fi
start=$SECONDS
# shellcheck disable=SC2086
java -jar "$jar" $jmh_args -rf json -rff "$results/$date.json" 2>&1 | tee benchmarks/target/jmh-$date.log
rt=0
java -cp "$jar" dev.omnium.bench.RoundTrips --tx 1000 --out "$results/$date-roundtrips.md" || rt=$?
java -cp "$jar" dev.omnium.bench.Interleaved --rounds 300 --block 50 --warm-rounds 40 --out "$results/$date-interleaved.md"
java -cp "$jar" dev.omnium.bench.Report --results "$results/$date.json" --roundtrips "$results/$date-roundtrips.md" \
  --interleaved "$results/$date-interleaved.md" --analysis benchmarks/ANALYSIS.md --out docs/performance.md --settings "$jmh_args" --command "benchmarks/run.sh"
echo "benchmarks: done in $((SECONDS - start)) s: $results/$date.json, $results/$date-roundtrips.md," \
  "$results/$date-interleaved.md, docs/performance.md"
if [[ $rt -ne 0 ]]; then echo "benchmarks: the round-trip check reported a missed target (exit $rt)" >&2; fi
