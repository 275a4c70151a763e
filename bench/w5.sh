#!/usr/bin/env bash
# W5 of BENCHMARKS.md: shared holds beside Redisson. W5a: a read/write lock, 16 readers and
# 2 writers on one key (official client acquireShared(key, 0) + acquire vs Redisson
# RReadWriteLock); W5b: a semaphore of 4 permits, 16 threads (acquireShared(key, 4) vs Redisson
# RPermitExpirableSemaphore and RSemaphore). One Leasehold server and one redis-server on
# loopback; SharedBench measures throughput, latency, writer fairness and checks exclusion.
# About 2.5 minutes with the defaults (20 s measured + 3 s warm-up per target and workload).
#
#   bench/w5.sh                          # build, start both servers, run, stop them
#   SKIP_BUILD=1 bench/w5.sh --duration 10 --hold-micros 0   # any SharedBench option
#
# Environment: SKIP_BUILD=1 (reuse the jars and bench/target), OUT_DIR (logs and table.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
require_redis
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/leasehold-w5.XXXXXX)}
mkdir -p "$OUT_DIR"
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    ./mvnw -B -q package -DskipTests -pl :leasehold -am
    ./mvnw -B -q -f bench/pom.xml package
fi
JAR=$(module_jar target leasehold)
CLIENT_JAR=$(module_jar client/target leasehold-client)
start_server "$OUT_DIR/leasehold.log" java -jar "$JAR" \
    --leasehold.address=127.0.0.1 --leasehold.port=0 --server.address=127.0.0.1 --server.port=0 \
    --leasehold.data-dir="$OUT_DIR/data" --leasehold.recovery-grace=0s
start_redis "$OUT_DIR"
echo "== Leasehold on 127.0.0.1:$SERVER_PORT (pid $SERVER_PID); redis-server on 127.0.0.1:$REDIS_PORT (pid $REDIS_PID)"
echo "== machine: $(nproc) cores, $(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f1-3), load $(cut -d' ' -f1-3 /proc/loadavg)"
java -Xms512m -Xmx512m -cp "bench/target/classes:bench/target/lib/*:$CLIENT_JAR" dev.leasehold.bench.SharedBench \
    --leasehold-port "$SERVER_PORT" --leasehold-pid "$SERVER_PID" --redis-port "$REDIS_PORT" --redis-pid "$REDIS_PID" \
    --out "$OUT_DIR/table.md" "$@" | tee "$OUT_DIR/bench.log"
