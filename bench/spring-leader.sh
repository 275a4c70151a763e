#!/usr/bin/env bash
# Spring Integration leader election through Leasehold (BENCHMARKS.md W7): three initiators for one
# role, the leader yields, measured to the next candidate's onGranted: LeaseholdLeaderInitiator
# (waits in the key's queue) beside SI's LockRegistryLeaderInitiator over a LeaseholdLockRegistry
# (polls tryLock with its 500 ms heart beat). Starts a server (fresh temp data dir, ports it picks
# itself) and stops it on exit. Loopback only; loops bounded by their round counts.
#
#   bench/spring-leader.sh [LEASEHOLD_ROUNDS [SI_ROUNDS]]     # defaults 1000 and 100
#
# Builds the server, the client and the adapter (tests skipped; nothing is installed) unless
# SKIP_BUILD=1, which reuses them and the adapter's runtime classpath of the last build. Not part
# of ./mvnw verify.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
WORK=$(mktemp -d /tmp/leasehold-spring-leader.XXXXXX)
bench_on_exit() {
    rm -rf "$WORK"
}
CLASSPATH_FILE=spring/integration/target/runtime-classpath.txt
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    ./mvnw -B -q -DskipTests -Dgo.skip=true -pl spring/integration -am package dependency:build-classpath \
        -Dmdep.includeScope=runtime -Dmdep.outputFile=target/runtime-classpath.txt >/dev/null
fi
[[ -f $CLASSPATH_FILE ]] || { echo "no $CLASSPATH_FILE: run without SKIP_BUILD=1 once" >&2; exit 1; }
JARS=$(module_jar client/target leasehold-client):$(module_jar spring/integration/target leasehold-spring-integration)
CP="$JARS:$(cat "$CLASSPATH_FILE")"
javac -d "$WORK/classes" -cp "$CP" bench/spring/SpringLeaderBench.java
JAR=$(module_jar target leasehold)
start_server "$WORK/server.log" java -jar "$JAR" --leasehold.address=127.0.0.1 --leasehold.port=0 \
    --server.address=127.0.0.1 --server.port=0 --leasehold.data-dir="$WORK/data"
echo "== load now: $(cut -d' ' -f1-3 /proc/loadavg); jars: $JARS"
java -cp "$WORK/classes:$CP" SpringLeaderBench "127.0.0.1:$SERVER_PORT" "${1:-1000}" "${2:-100}"
