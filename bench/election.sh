#!/usr/bin/env bash
# W7 of BENCHMARKS.md: leader election (docs/election.md). Three candidates and an observer, each
# on a client of its own, on this host: ROUNDS graceful handovers (the leader's resign() to the
# next candidate's onStartedLeading, and to the observer's onNewLeader), then CRASH_ROUNDS crash
# handovers (candidates in JVMs of their own, the leader's killed with kill -9, lease CRASH_LEASE
# seconds) on a single node; with CLUSTER=1 both on a three-node cluster too (ROUNDS=0 runs the
# crash handovers alone),
# and with ETCD=1 the same graceful handovers through etcd's election API on a three-member etcd
# (Debian's etcd-server). Every loop is bounded by its round count and every wait by a timeout.
#
#   bench/election.sh                                   # build, single node: 1000 graceful, 20 crash
#   SKIP_BUILD=1 CLUSTER=1 ETCD=1 ROUNDS=1000 bench/election.sh
#
# Environment: SKIP_BUILD=1 (reuse the jars and bench/target), ROUNDS (1000), WARMUP (100),
# CRASH_ROUNDS (20), CRASH_LEASE (2), CLUSTER=1, ETCD=1, CLUSTER_BASE_PORT (27420),
# ETCD_BASE_PORT (23790), OUT_DIR (logs, table.md). The Spring comparison is bench/spring-leader.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/leasehold-election.XXXXXX)}
mkdir -p "$OUT_DIR"
CLUSTER_DIR="$OUT_DIR/cluster"
export BASE_PORT=${CLUSTER_BASE_PORT:-27420}
ROUNDS=${ROUNDS:-1000}
WARMUP=${WARMUP:-100}
bench_on_exit() {
    if [[ "${CLUSTER:-0}" == "1" ]]; then
        bin/leasehold-cluster stop "$CLUSTER_DIR" >/dev/null 2>&1 || true
    fi
}
[[ "${ETCD:-0}" == "1" ]] && require_etcd
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    ./mvnw -B -q package -DskipTests -Dgo.skip=true -pl :leasehold -am
    ./mvnw -B -q -f bench/pom.xml package
fi
JAR=$(module_jar target leasehold)
CLIENT_JAR=$(module_jar client/target leasehold-client)
CP="bench/target/classes:bench/target/lib/*:$CLIENT_JAR"
echo "== machine: $(nproc) cores, $(java -version 2>&1 | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
start_server "$OUT_DIR/leasehold.log" java -jar "$JAR" \
    --leasehold.address=127.0.0.1 --leasehold.port=0 --server.address=127.0.0.1 --server.port=0 \
    --leasehold.data-dir="$OUT_DIR/data" --leasehold.recovery-grace=0s
echo "== Leasehold on 127.0.0.1:$SERVER_PORT, pid $SERVER_PID"
java -Xmx512m -cp "$CP" dev.leasehold.bench.ElectionBench --servers "127.0.0.1:$SERVER_PORT" \
    --label "Leasehold, single node" --rounds "$ROUNDS" --warmup "$WARMUP" \
    --crash-rounds "${CRASH_ROUNDS:-20}" --crash-lease "${CRASH_LEASE:-2}" --out "$OUT_DIR/table.md" \
    | tee "$OUT_DIR/bench.log"
if [[ "${CLUSTER:-0}" == "1" ]]; then
    start_cluster "$JAR" "$CLUSTER_DIR"
    SERVERS="127.0.0.1:$BASE_PORT,127.0.0.1:$((BASE_PORT + 2)),127.0.0.1:$((BASE_PORT + 4))"
    echo "== cluster leader on 127.0.0.1:$CLUSTER_LEADER; node PIDs $CLUSTER_PIDS"
    java -Xmx512m -cp "$CP" dev.leasehold.bench.ElectionBench --servers "$SERVERS" \
        --label "Leasehold, 3-node cluster" --rounds "$ROUNDS" --warmup "$WARMUP" \
        --crash-rounds "${CRASH_ROUNDS:-20}" --crash-lease "${CRASH_LEASE:-2}" --out "$OUT_DIR/table.md" \
        | tee -a "$OUT_DIR/bench.log"
fi
if [[ "${ETCD:-0}" == "1" ]]; then
    start_etcd "$OUT_DIR/etcd" "${ETCD_BASE_PORT:-23790}"
    echo "== etcd $(etcd --version | head -1 | awk '{print $3}') members at $ETCD_ENDPOINTS"
    java -Xmx512m -cp "$CP" dev.leasehold.bench.ElectionBench --etcd "$ETCD_ENDPOINTS" \
        --etcd-label "etcd 3-member (jetcd Election)" --rounds "$ROUNDS" --warmup "$WARMUP" --out "$OUT_DIR/table.md" \
        | tee -a "$OUT_DIR/bench.log"
fi
echo "== table in $OUT_DIR/table.md"
cat "$OUT_DIR/table.md"
