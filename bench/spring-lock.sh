#!/usr/bin/env bash
# Spring Integration's Lock through Leasehold, as a Spring user holds it: 16 threads, each
# lock() then unlock() on its own 64 keys through ONE LeaseholdLockRegistry (renewal off), 2 s
# warm-up, then SECONDS measured (default 6). Starts a server (fresh temp data dir, free loopback
# ports) and stops it on exit. Loopback only; the loop is bounded by time.
#
#   bench/spring-lock.sh [SECONDS]
#   SPRING_JARS="/old/leasehold-client.jar:/old/leasehold-spring-integration.jar" bench/spring-lock.sh   # before/after
#
# Builds the jars unless SKIP_BUILD=1. Not part of ./mvnw verify.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_MEASURED=${1:-6}
WORK=$(mktemp -d /tmp/leasehold-spring-bench.XXXXXX)
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    ./mvnw -B -q install -DskipTests
fi
./mvnw -B -q -pl spring/integration dependency:build-classpath -Dmdep.includeScope=runtime \
    -Dmdep.outputFile="$WORK/deps.cp" >/dev/null
JARS=${SPRING_JARS:-$(ls client/target/leasehold-client-*.jar | grep -v -E -- '-(sources|javadoc|tests)\.jar$' | head -1):$(ls spring/integration/target/leasehold-spring-integration-*.jar | grep -v -E -- '-(sources|javadoc|tests)\.jar$' | head -1)}
CP="$JARS:$(cat "$WORK/deps.cp")"
javac -d "$WORK/classes" -cp "$CP" bench/spring/SpringLockBench.java
JAR=$(ls target/leasehold-*.jar | grep -v -- '-client.jar' | head -1)
PORT=$(free_port)
HTTP=$(free_port)
java -jar "$JAR" --leasehold.port="$PORT" --server.port="$HTTP" --leasehold.data-dir="$WORK/data" \
    >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$HTTP/actuator/health/readiness" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "server died:"; tail -30 "$WORK/server.log"; exit 1; }
    sleep 0.2
done
echo "== load now: $(cut -d' ' -f1-3 /proc/loadavg); jars: $JARS"
java -cp "$WORK/classes:$CP" SpringLockBench "127.0.0.1:$PORT" "$SECONDS_MEASURED"
