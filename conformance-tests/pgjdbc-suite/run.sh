#!/usr/bin/env bash
# pgjdbc's own JUnit suite (the tag of the pgjdbc version the build uses), compiled here with javac
# against jars from Maven Central, run on plain pgjdbc and through omnium against a sandbox
# cluster; prints the counts of each run and the tests that pass on pgjdbc but fail through omnium.
# See NOTES.md beside this script. Nothing of the build or .ci/run depends on it.
#
#   conformance-tests/pgjdbc-suite/run.sh [--modes pgjdbc,omnium,replica] [--version 18|15]
#       [--work DIR] [--no-build] [--keep-cluster] [--rerun-failed] [--compare]
#       [-- console-launcher selectors, e.g. --select-class org.postgresql.test.jdbc2.StatementTest]
#
# Modes: pgjdbc    plain pgjdbc, jdbc:postgresql: (the oracle)
#        omnium    jdbc:omnium:postgresql: without a replica (every read on the primary, fallback)
#        replica   jdbc:omnium:postgresql:...&replica=R with a heartbeat sidecar: read-only work
#                  runs on the replica
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mirror=${PGJDBC_MIRROR:-/work/.mirror/pgjdbc+pgjdbc/repo}
tag=${PGJDBC_TAG:-REL42.7.8}
work=${PGJDBC_SUITE_WORK:-/tmp/pgjdbc-suite}
modes=pgjdbc,omnium,replica
version=18
build=1
keep=0
compare_only=0
rerun_failed=0
selectors=()

while [ $# -gt 0 ]; do
  case "$1" in
    --modes) modes=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --keep-cluster) keep=1; shift ;;
    --compare) compare_only=1; shift ;;
    --rerun-failed) rerun_failed=1; shift ;;
    --) shift; selectors=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

case "$work" in "$repo"|"$repo"/*) echo "the work directory must be outside the repository" >&2; exit 2 ;; esac
mkdir -p "$work"
log() { printf '[pgjdbc-suite] %s\n' "$*" >&2; }

# Maven as the repository's builds run it: the worktree's own .mvn/maven.config (its local
# repository) applies to the throwaway pom as well.
mvn_args=(-B -q)
if [ -f "$repo/.mvn/maven.config" ]; then
  read -r -a extra < <(tr "\n" " " < "$repo/.mvn/maven.config"; echo) || true
  mvn_args+=("${extra[@]}")
fi

compare() {
  python3 "$here/compare.py" "$work/reports" "$@"
}
if [ "$compare_only" = 1 ]; then
  compare ${modes//,/ }
  exit 0
fi

# ---------------------------------------------------------------- sources (never in the repository)
src="$work/src"
if [ ! -f "$src/.tag-$tag" ]; then
  log "extracting pgjdbc's tests at $tag into $src"
  rm -rf "$src" && mkdir -p "$src"
  git --git-dir="$mirror" archive "$tag" pgjdbc/src/test testkit build.properties \
      ssltest.properties certdir | tar -x -C "$src"
  # The one change to pgjdbc's code: TestUtil's URL prefix comes from a system property, and its
  # server version checks unwrap instead of casting.
  python3 "$here/patch_testutil.py" "$src/testkit/src/main/java/org/postgresql/test/TestUtil.java"
  rm -rf "$work/classes"
  touch "$src/.tag-$tag"
fi

# ---------------------------------------------------------------- test dependencies (Maven Central)
lib="$work/lib"
if [ ! -f "$lib/.done" ]; then
  log "resolving the test dependencies into $lib"
  mkdir -p "$work/deps" && rm -rf "$lib"
  cp "$here/deps-pom.xml" "$work/deps/pom.xml"
  (cd "$work/deps" && mvn "${mvn_args[@]}" dependency:copy-dependencies \
      -DoutputDirectory="$lib" -DincludeScope=runtime)
  touch "$lib/.done"
fi

# ---------------------------------------------------------------- omnium (driver and sandbox jars)
if [ "$build" = 1 ]; then
  log "building the driver and the sandbox"
  (cd "$repo" && nice -n 10 mvn "${mvn_args[@]}" -pl driver,sandbox -am package -DskipTests \
      -Dcheckstyle.skip)
fi
omnium_cp="$repo/driver/target/omnium-jdbc.jar"
for j in "$repo"/driver/target/lib/*.jar; do
  case "$(basename "$j")" in postgresql-*|checker-qual-*) ;; *) omnium_cp+=":$j" ;; esac
done
sandbox_jar="$repo/sandbox/target/omnium-sandbox.jar"
[ -f "$sandbox_jar" ] && [ -f "$repo/driver/target/omnium-jdbc.jar" ] \
  || { echo "build the driver and sandbox first (drop --no-build)" >&2; exit 1; }

# ---------------------------------------------------------------- compile pgjdbc's tests
classes="$work/classes"
if [ ! -f "$classes/.done" ]; then
  log "compiling pgjdbc's tests"
  rm -rf "$classes" && mkdir -p "$classes"
  find "$src/testkit/src/main/java" "$src/pgjdbc/src/test/java" -name '*.java' > "$work/sources.txt"
  nice -n 10 javac -nowarn -encoding UTF-8 --release 17 -proc:none -d "$classes" \
      -cp "$lib/*" @"$work/sources.txt" 2>&1 | grep -v '^Note:' || true
  [ -f "$classes/org/postgresql/test/TestUtil.class" ] || { echo "compilation failed" >&2; exit 1; }
  cp -r "$src/pgjdbc/src/test/resources/." "$classes/"
  touch "$classes/.done"
fi

# ---------------------------------------------------------------- the cluster
cluster_log="$work/cluster.log"
sandbox_pid=""
heartbeat_pid=""
cleanup() {
  if [ -n "$heartbeat_pid" ]; then kill "$heartbeat_pid" 2>/dev/null || true; wait "$heartbeat_pid" 2>/dev/null || true; fi
  # the servers' logs go with the cluster: keep a copy for a run that went wrong
  for n in primary replica1 replica2; do
    d=$(node_dir "$n" 2>/dev/null) && [ -f "$d.log" ] && cp "$d.log" "$work/$n.log" || true
  done
  if [ -n "$sandbox_pid" ] && [ "$keep" = 0 ]; then
    kill "$sandbox_pid" 2>/dev/null || true   # its shutdown hook stops the servers
    wait "$sandbox_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

log "starting a PostgreSQL $version primary and 2 replicas"
# a private temporary directory: no other JVM's sandbox (which reaps clusters it takes for
# orphans under the shared one) ever sees this cluster
mkdir -p "$work/tmp" && chmod 755 "$work" "$work/tmp"
java -Djava.io.tmpdir="$work/tmp" -jar "$sandbox_jar" --serve --replicas 2 --version "$version" \
  --set wal_level=logical --set max_prepared_transactions=64 --set max_replication_slots=10 \
  --set max_wal_senders=20 --set timezone=Etc/UTC > "$cluster_log" 2>&1 &
sandbox_pid=$!
for _ in $(seq 1 600); do
  grep -q '^  omnium:' "$cluster_log" && break
  kill -0 "$sandbox_pid" 2>/dev/null || { cat "$cluster_log" >&2; exit 1; }
  sleep 0.2
done
grep -q '^  omnium:' "$cluster_log" || { cat "$cluster_log" >&2; exit 1; }
node_dir() { sed -n "s/^  $1: .*(log: \(.*\)\.log)$/\1/p" "$cluster_log"; }
node_port() { sed -n "s/^  $1: *jdbc:postgresql:\/\/127.0.0.1:\([0-9]*\)\/.*/\1/p" "$cluster_log"; }
pport=$(node_port primary); r1port=$(node_port replica1); r2port=$(node_port replica2)
log "primary 127.0.0.1:$pport, replicas :$r1port and :$r2port"

psql_super() { psql -X -q -o /dev/null -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pport" -U postgres -d "$1" -c "$2"; }
# What pgjdbc's CI container sets up (docker/postgres-server/scripts/post-startup.sh): a test user
# with a password, its databases, hstore; pgjdbc's pg_hba.conf (postgres trusted, passwords for
# the rest).
psql_super omnium "SET password_encryption = 'scram-sha-256'; CREATE USER test WITH PASSWORD 'test'"
for db in test test_2; do psql_super omnium "CREATE DATABASE $db OWNER test"; done
for db in hostdb hostssldb hostnossldb certdb hostsslcertdb; do psql_super omnium "CREATE DATABASE $db"; done
psql_super test "CREATE EXTENSION hstore"
# the heartbeat table (omnium's replica mode) lives in a schema of its own, out of the tests' sight
psql_super test "CREATE SCHEMA omnium_heartbeat AUTHORIZATION test"
hba='local all postgres trust
local replication all trust
host all postgres 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
host test all 127.0.0.1/32 md5
host test_2 all 127.0.0.1/32 md5
host hostdb all 127.0.0.1/32 md5
hostnossl hostnossldb all 127.0.0.1/32 md5
host omnium all 127.0.0.1/32 md5
'
for n in primary replica1 replica2; do
  d=$(node_dir "$n")
  printf '%s' "$hba" > "$d/pg_hba.conf"
done
psql_super omnium "SELECT pg_reload_conf()"
for p in "$r1port" "$r2port"; do psql -X -q -o /dev/null -h 127.0.0.1 -p "$p" -U postgres -d omnium -c "SELECT pg_reload_conf()"; done

cat > "$src/build.local.properties" <<EOF
test.url.PGHOST=127.0.0.1
test.url.PGPORT=$pport
test.url.PGDBNAME=test
user=test
password=test
privilegedUser=postgres
privilegedPassword=
secondaryServer1=127.0.0.1
secondaryPort1=$r1port
secondaryServer2=127.0.0.1
secondaryPort2=$r2port
EOF

# ---------------------------------------------------------------- the runs
run_mode() {
  local mode=$1 cp="$classes:$lib/*" prefix="jdbc:postgresql:" props=()
  case "$mode" in
    pgjdbc) ;;
    omnium) cp+=":$omnium_cp"; prefix="jdbc:omnium:postgresql:" ;;
    replica)
      cp+=":$omnium_cp"; prefix="jdbc:omnium:postgresql:"
      props+=("-Dtest.url.replica=127.0.0.1:$r1port"
              "-Dtest.url.heartbeatTable=omnium_heartbeat.replica_heartbeat")
      if [ -z "$heartbeat_pid" ]; then
        java -jar "$repo/driver/target/omnium-jdbc.jar" heartbeat \
          "jdbc:omnium:postgresql://127.0.0.1:$pport/test?user=test&password=test&heartbeatInterval=250ms&heartbeatTable=omnium_heartbeat.replica_heartbeat&applicationName=suite-heartbeat" \
          > "$work/heartbeat.log" 2>&1 &
        heartbeat_pid=$!
      fi
      ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
  local reports="$work/reports/$mode"
  local select=(--scan-classpath "$classes" --include-classname '.*' --exclude-classname '.*Suite.*')
  if [ ${#selectors[@]} -gt 0 ]; then select=("${selectors[@]}"); fi
  if [ "$rerun_failed" = 1 ]; then
    mapfile -t select < <(python3 "$here/compare.py" "$work/reports" --selectors pgjdbc "$mode")
    [ ${#select[@]} -gt 0 ] || { log "$mode: nothing to rerun"; return; }
    reports="$work/reports/$mode-rerun"
  fi
  rm -rf "$reports" && mkdir -p "$reports"
  log "running mode $mode (output: $reports/console.txt)"
  # As pgjdbc's Gradle build runs them (build-logic test-base and test-junit5): a Turkish locale,
  # JUnit's parallel mode (classes opt in), extension auto-detection, a 5 minute test timeout.
  (cd "$src/pgjdbc" && nice -n 10 java -Xmx1g \
    -Duser.language=TR -Duser.country=tr -Djava.awt.headless=true \
    -Dbuild.properties.relative.path="$src/" \
    -Djunit.jupiter.execution.parallel.enabled=true \
    -Djunit.jupiter.execution.parallel.config.strategy=DYNAMIC \
    -Djunit.jupiter.extensions.autodetection.enabled=true \
    -Djunit.jupiter.execution.timeout.default="5 m" \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -DpgjdbcSuite.urlPrefix="$prefix" "${props[@]}" \
    -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --details=tree --disable-ansi-colors --reports-dir="$reports" "${select[@]}" \
    > "$reports/console.txt" 2>&1) || true
  python3 "$here/compare.py" "$work/reports" --counts "$(basename "$reports")"
  psql -X -q -o /dev/null -h 127.0.0.1 -p "$pport" -U postgres -d test -c "SELECT 1" \
    || log "WARNING: the primary stopped during mode $mode (its log: $work/primary.log)"
}

for m in ${modes//,/ }; do run_mode "$m"; done
[ ${#selectors[@]} -gt 0 ] || [ "$rerun_failed" = 1 ] || compare ${modes//,/ }
