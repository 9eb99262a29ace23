#!/usr/bin/env bash
# The fleet benchmark behind section 10 of docs/performance.md (dev.omnium.bench.Fleet): 1, 10 and 40
# application processes, each a small JVM with one HikariCP pool of at most 4 connections, against one
# PostgreSQL 18 primary and one replica, for plain pgjdbc, the AWS Advanced JDBC Wrapper and omnium (with
# and without heartbeatWriter): sessions and statements per second on each server, idle and under a light
# read load. Writes benchmarks/results/<date>-fleet.md, then regenerates docs/performance.md from the newest
# full run (REPORT_ONLY=1 benchmarks/run.sh), which takes its section 10 from this file.
# Expected duration: about 45 minutes (each stack and process count idles 100 s so that the internal pools
# shrink, then two 30 s windows); 40 JVMs need about 6 GB of memory. PROCESSES=1,2 and FLEET_ARGS (e.g.
# "--idle-settle 20s --window 10s") make a shorter run; with anything but the defaults the results go to
# benchmarks/target/fleet instead, and the docs stay as they are, unless KEEP=1 (a smaller run kept as
# the measurement, e.g. on a shared machine: PROCESSES=1,4 FLEET_ARGS="--window 15s --load-settle 5s").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jar=benchmarks/target/benchmarks.jar
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  mvn -B -q -pl benchmarks -am package -DskipTests
fi
date="$(date -u +%Y-%m-%d)"
processes="${PROCESSES:-1,10,40}"
extra="${FLEET_ARGS:-}"
if [[ ( "$processes" == "1,10,40" && -z "$extra" ) || "${KEEP:-0}" == 1 ]]; then
  out="benchmarks/results/$date-fleet.md"
else
  mkdir -p benchmarks/target/fleet
  out="benchmarks/target/fleet/$date-fleet.md"
fi
start=$SECONDS
# shellcheck disable=SC2086
java -cp "$jar" dev.omnium.bench.Fleet --processes "$processes" $extra --out "$out"
echo "fleet: measured in $((SECONDS - start)) s: $out"
if [[ "$out" == benchmarks/results/* ]]; then
  SKIP_BUILD=1 REPORT_ONLY=1 benchmarks/run.sh
  echo "fleet: docs/performance.md regenerated with section 10 from $out"
fi
