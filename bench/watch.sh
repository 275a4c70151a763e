#!/usr/bin/env bash
# W6 of BENCHMARKS.md: observe (PROTOCOL.md section 16). One observer session watches 1,000 keys
# while changer sessions grant and release them at 10,000 changes/s; WatchBench reports the event
# latency (the request that made a change written → its event read), the answer latency of the
# same requests beside it, events read and coalesced, and the server CPU per event (the same
# changes run first unwatched). A single node, and with CLUSTER=1 a three-node cluster too (the
# changers and the observer on its leader; CPU summed over the three nodes). About 40 s per
# target with the defaults.
#
#   bench/watch.sh                                  # build, single node
#   SKIP_BUILD=1 CLUSTER=1 bench/watch.sh --duration 10 --rate 10000 --keys 1000
#
# Any WatchBench option passes through: --keys, --rate (changes/s), --changers, --batch (acquires
# pipelined per write), --warmup and --duration (seconds). Environment: SKIP_BUILD=1 (reuse the
# jars and bench/target), CLUSTER=1, CLUSTER_BASE_PORT (default 27420), OUT_DIR (logs, table.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/leasehold-watch.XXXXXX)}
mkdir -p "$OUT_DIR"
CLUSTER_DIR="$OUT_DIR/cluster"
export BASE_PORT=${CLUSTER_BASE_PORT:-27420}
bench_on_exit() {
    if [[ "${CLUSTER:-0}" == "1" ]]; then
        bin/leasehold-cluster stop "$CLUSTER_DIR" >/dev/null 2>&1 || true
    fi
}
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    ./mvnw -B -q package -DskipTests -pl :leasehold -am
    ./mvnw -B -q -f bench/pom.xml package
fi
JAR=$(module_jar target leasehold)
echo "== machine: $(nproc) cores, $(java -version 2>&1 | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
start_server "$OUT_DIR/leasehold.log" java -jar "$JAR" \
    --leasehold.address=127.0.0.1 --leasehold.port=0 --server.address=127.0.0.1 --server.port=0 \
    --leasehold.data-dir="$OUT_DIR/data" --leasehold.recovery-grace=0s
echo "== Leasehold on 127.0.0.1:$SERVER_PORT, pid $SERVER_PID"
java -Xms512m -Xmx512m -cp "bench/target/classes" dev.leasehold.bench.WatchBench \
    --port "$SERVER_PORT" --pid "$SERVER_PID" --label "single node" --out "$OUT_DIR/table.md" "$@" \
    | tee "$OUT_DIR/bench.log"
if [[ "${CLUSTER:-0}" == "1" ]]; then
    start_cluster "$JAR" "$CLUSTER_DIR"
    echo "== cluster leader on 127.0.0.1:$CLUSTER_LEADER; node PIDs $CLUSTER_PIDS"
    java -Xms512m -Xmx512m -cp "bench/target/classes" dev.leasehold.bench.WatchBench \
        --port "$CLUSTER_LEADER" --pid "$CLUSTER_PIDS" --label "3-node cluster" --out "$OUT_DIR/table.md" "$@" \
        | tee -a "$OUT_DIR/bench.log"
fi
echo "== table in $OUT_DIR/table.md"
cat "$OUT_DIR/table.md"
