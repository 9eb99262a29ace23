#!/usr/bin/env bash
# Case 1 interleaved (dev.omnium.bench.Interleaved, 1 thread) twice: once as benchmarks/run.sh runs it,
# once with the OpenTelemetry Java agent attached to the measuring JVMs (every contender's statements
# then make JDBC spans; omnium's also get the server they ran on); then TracingBenchmark (JMH): one
# statement's span with and without omnium's decoration. The agent comes from Maven Central
# (the version otel-tests uses) into benchmarks/target/otel-agents. The spans are made and dropped
# (exporter none): what is measured is the cost of tracing in the client, not of an exporter.
#   benchmarks/otel.sh                 # 1200 rounds (ROUNDS=n) over 8 forks each, results/<date>-interleaved-otel*.md
# Eight forks, each warmed up until the JIT is quiet: under the agent C2 compiles for up to half a
# minute, and rounds measured meanwhile differ from one JVM to the next by microseconds
# (observability.md, cost of tracing). Idle vCPUs poll while it measures (halt-poll.sh).
#   QUICK=1 benchmarks/otel.sh         # a tooling check into benchmarks/target/quick
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
jar="$here/target/benchmarks.jar"
if [[ ! -f "$jar" ]]; then
  mvn -B -q -pl benchmarks -am package -DskipTests
fi
version="$(sed -n 's:.*<otel.agent.version>\(.*\)</otel.agent.version>.*:\1:p' otel-tests/pom.xml)"
agents="$here/target/otel-agents"
agent="$agents/opentelemetry-javaagent-$version.jar"
if [[ ! -f "$agent" ]]; then
  mvn -B -q -N dependency:copy -Dartifact="io.opentelemetry.javaagent:opentelemetry-javaagent:$version" \
    -DoutputDirectory="$agents"
fi
date="$(date -u +%Y-%m-%d)"
results=benchmarks/results
il_args=(--rounds "${ROUNDS:-1200}" --block 50 --warm-rounds 40 --warm-quiet-ms 2000 --threads 1 --forks 8)
if [[ "${QUICK:-0}" == 1 ]]; then
  results=benchmarks/target/quick
  il_args=(--rounds 4 --block 10 --warm-rounds 1 --threads 1 --forks 2)
  export OMNIUM_BENCH_WARM_ROUNDS=1
fi
mkdir -p "$results"
heap=(-Xms2g -Xmx2g -XX:+AlwaysPreTouch)
# shellcheck source=benchmarks/halt-poll.sh
source "$here/halt-poll.sh"
otel=(-javaagent:"$agent" -Dotel.service.name=omnium-benchmarks -Dotel.traces.exporter=none
  -Dotel.metrics.exporter=none -Dotel.logs.exporter=none -Dotel.semconv-stability.opt-in=database/dup)
start=$SECONDS
java "${heap[@]}" -cp "$jar" dev.omnium.bench.Interleaved "${il_args[@]}" --out "$results/$date-interleaved-no-otel.md"
echo "benchmarks: interleaved without the agent done after $((SECONDS - start)) s"
java "${heap[@]}" "${otel[@]}" -cp "$jar" dev.omnium.bench.Interleaved "${il_args[@]}" --out "$results/$date-interleaved-otel.md"
echo "benchmarks: interleaved with opentelemetry-javaagent $version done after $((SECONDS - start)) s"
# What omnium's decoration costs one statement, apart from a transaction's noise (JMH, ns/op).
tracing_args=()
if [[ "${QUICK:-0}" == 1 ]]; then tracing_args=(-wi 0 -i 1 -r 500ms); fi
java -jar "$jar" TracingBenchmark "${tracing_args[@]}" -rf text -rff "$results/$date-tracing.txt" \
  > benchmarks/target/tracing-$date.log 2>&1 || { tail -n 40 benchmarks/target/tracing-$date.log; exit 1; }
cat "$results/$date-tracing.txt"
echo "benchmarks: TracingBenchmark done after $((SECONDS - start)) s"
