#!/usr/bin/env bash
# Spring Integration's Lock through Leasehold, as a Spring user holds it: 16 threads, each
# lock() then unlock() on its own 64 keys through ONE LeaseholdLockRegistry (renewal off), 2 s
# warm-up, then SECONDS measured (default 6). Starts a server (fresh temp data dir, ports it picks
# itself) and stops it on exit. Loopback only; the loop is bounded by time.
#
#   bench/spring-lock.sh [SECONDS]
#   SPRING_JARS="/old/leasehold-client.jar:/old/leasehold-spring-integration.jar" bench/spring-lock.sh   # before/after
#
# Builds the server, the client and the adapter (tests skipped; nothing is installed) unless
# SKIP_BUILD=1, which reuses them and the adapter's runtime classpath of the last build. Not part
# of ./mvnw verify.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
SECONDS_MEASURED=${1:-6}
WORK=$(mktemp -d /tmp/leasehold-spring-bench.XXXXXX)
bench_on_exit() {
    rm -rf "$WORK"
}

# The adapter's runtime classpath, written by each module into its own target/ (relative path).
CLASSPATH_FILE=spring/integration/target/runtime-classpath.txt
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    ./mvnw -B -q -DskipTests -pl spring/integration -am package dependency:build-classpath \
        -Dmdep.includeScope=runtime -Dmdep.outputFile=target/runtime-classpath.txt >/dev/null
fi
[[ -f $CLASSPATH_FILE ]] || { echo "no $CLASSPATH_FILE: run without SKIP_BUILD=1 once" >&2; exit 1; }
JARS=${SPRING_JARS:-$(module_jar client/target leasehold-client):$(module_jar spring/integration/target leasehold-spring-integration)}
CP="$JARS:$(cat "$CLASSPATH_FILE")"
javac -d "$WORK/classes" -cp "$CP" bench/spring/SpringLockBench.java
JAR=$(module_jar target leasehold)
start_server "$WORK/server.log" java -jar "$JAR" --leasehold.address=127.0.0.1 --leasehold.port=0 \
    --server.address=127.0.0.1 --server.port=0 --leasehold.data-dir="$WORK/data"
echo "== load now: $(cut -d' ' -f1-3 /proc/loadavg); jars: $JARS"
java -cp "$WORK/classes:$CP" SpringLockBench "127.0.0.1:$SERVER_PORT" "$SECONDS_MEASURED"
