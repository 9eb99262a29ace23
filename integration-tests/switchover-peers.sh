#!/usr/bin/env bash
# The switchover peer comparison of docs/reliability.md (not part of CI; a few minutes):
# omnium, pgjdbc multi-host and the AWS JDBC Wrapper's srw plugin through the same planned
# switchover and crash failover, one at a time. Usage: integration-tests/switchover-peers.sh [18|15]
# The table lands in integration-tests/target/switchover-peers.md.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl integration-tests -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=SwitchoverComparison -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dswitchover.peers.version="${1:-18}"
cat integration-tests/target/switchover-peers.md
