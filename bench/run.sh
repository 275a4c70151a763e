#!/usr/bin/env bash
# Leasehold next to Redis, side by side, on this machine; loopback only. BENCHMARKS.md explains
# the targets, the workloads and the table.
#
#   bench/run.sh                 # every workload against every target (about 6 minutes)
#   bench/run.sh --duration 5    # any Bench option (see bench/src/.../Bench.java usage())
#   bench/run.sh --targets leasehold,client --workloads lat   # no Redis needed for these targets
#
# Environment:
#   SKIP_BUILD=1        reuse target/leasehold-*.jar, client/target and bench/target (no Maven)
#   SERVER_JAVA_OPTS    extra JVM options for the Leasehold server (e.g. a JFR recording)
#   BENCH_JAVA_OPTS     extra JVM options for the load generator (e.g. a JFR recording of the client)
#   SERVER_JAR          the server jar to measure (default target/leasehold-<v>.jar), for before/after runs
#   CLIENT_JAR          the client jar to measure (default client/target/leasehold-client-<v>.jar)
#   SERVER_ARGS         extra Spring arguments for the server (e.g. --leasehold.io-threads=1)
#   OUT_DIR             where logs and the table go (default: a new temp dir)
#   SERVER_CPUS, BENCH_CPUS   pin the servers (Leasehold and Redis) and the load generator to
#                       these CPUs (taskset -c lists, e.g. 0 and 1): separates preemption by the
#                       generator from the servers' own tail
#   CLUSTER=1           also start a three-node cluster (bin/leasehold-cluster, 3 more JVMs) and
#                       measure its leader as another column (W1 sync, W1 pipelined, W2, latency),
#                       then its failover: FAILOVER_ROUNDS (default 5) rounds of kill -9 of the
#                       leader → first grant on a fresh session. CLUSTER_BASE_PORT (default 27420)
#                       and the 14 ports above it are the cluster's (its nodes must know each
#                       other's addresses before they start, so they cannot bind port 0).
#                       With CLUSTER=1 a three-member etcd runs too (ETCD=0 leaves it out; needs
#                       Debian's etcd-server), measured through jetcd's Lock as target etcd, with
#                       the cluster also through the official client (target cluster-client), and
#                       a 15 s warm-up per workload unless --warmup is given. That is not enough for
#                       three server JVMs on 2 shared cores: add --prewarm 120 (two minutes of W1
#                       on each target first, not recorded) before comparing with etcd.
#                       ETCD_BASE_PORT (default 23790) and the 5 ports above it are etcd's.
#                       The comparison: CLUSTER=1 FAILOVER_ROUNDS=0 bench/run.sh --targets
#                       cluster-client,etcd --workloads w1,w2,lat --prewarm 120
#   RAFT_TLS=1          with CLUSTER=1: the cluster's Raft port runs mutual TLS (bin/leasehold-cluster
#                       makes the certificates); compare with a run without it for TLS's cost
#
# It builds the server and client (tests skipped: CI runs them) and this load generator, starts
# the server (fresh temp data dir, ports it picks itself) and, for the Redis targets, redis-server
# (no persistence), runs the workloads, and stops what it started by PID on exit, whatever happens.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/leasehold-bench.XXXXXX)}
mkdir -p "$OUT_DIR"
CLUSTER_DIR="$OUT_DIR/cluster"
export BASE_PORT=${CLUSTER_BASE_PORT:-27420}

bench_on_exit() {
    if [[ "${CLUSTER:-0}" == "1" ]]; then
        bin/leasehold-cluster stop "$CLUSTER_DIR" >/dev/null 2>&1 || true
    fi
}

# Which servers the targets need (Bench's default targets when --targets is not given).
TARGETS=leasehold,client,redis,redisson,redisson-fair
ARGS=("$@")
for (( i = 0; i + 1 < ${#ARGS[@]}; i++ )); do
    [[ ${ARGS[$i]} == --targets ]] && TARGETS=${ARGS[$((i + 1))]} && TARGETS_GIVEN=1
done
# etcd runs with CLUSTER=1 (unless ETCD=0), and only if --targets, when given, names it.
RUN_ETCD=0
[[ "${CLUSTER:-0}" == "1" && "${ETCD:-1}" == "1" ]] && RUN_ETCD=1
wants() { # wants NAME...: one of these targets is asked for
    local n
    for n in "$@"; do [[ ",$TARGETS," == *",$n,"* ]] && return 0; done
    return 1
}
wants redis redisson redisson-fair && require_redis
if [[ -n "${TARGETS_GIVEN:-}" ]] && ! wants etcd; then
    RUN_ETCD=0
fi
[[ $RUN_ETCD == 1 ]] && require_etcd

# W4 opens 10 k sessions: each side (load generator, server) needs that many descriptors.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
echo "open files limit: $(ulimit -n)"

START=$(date +%s)
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    echo "== building server and load generator"
    ./mvnw -B -q package -DskipTests
    rm -rf bench/target/lib
    ./mvnw -B -q -f bench/pom.xml package
fi
JAR=${SERVER_JAR:-$(module_jar target leasehold)}
CLIENT_JAR=${CLIENT_JAR:-$(module_jar client/target leasehold-client)}

SERVER_PIN=(); BENCH_PIN=()
[[ -n "${SERVER_CPUS:-}" ]] && SERVER_PIN=(taskset -c "$SERVER_CPUS")
[[ -n "${BENCH_CPUS:-}" ]] && BENCH_PIN=(taskset -c "$BENCH_CPUS")

BENCH_ARGS=()
if wants leasehold client; then
    echo "== starting Leasehold ($JAR)"
    # recovery-grace=0s: a fresh data dir needs no grace; the property is ignored where it does not exist.
    # shellcheck disable=SC2086
    start_server "$OUT_DIR/leasehold.log" "${SERVER_PIN[@]}" java ${SERVER_JAVA_OPTS:-} -jar "$JAR" \
        --leasehold.address=127.0.0.1 --leasehold.port=0 --server.address=127.0.0.1 --server.port=0 \
        --leasehold.data-dir="$OUT_DIR/data" --leasehold.recovery-grace=0s ${SERVER_ARGS:-}
    echo "== Leasehold on 127.0.0.1:$SERVER_PORT (HTTP $SERVER_HTTP), pid $SERVER_PID"
    BENCH_ARGS+=(--leasehold-port "$SERVER_PORT" --leasehold-pid "$SERVER_PID" --leasehold-http "$SERVER_HTTP")
fi
if wants redis redisson redisson-fair; then
    start_redis "$OUT_DIR" "${SERVER_PIN[@]}"
    echo "== redis-server on 127.0.0.1:$REDIS_PORT, pid $REDIS_PID"
    BENCH_ARGS+=(--redis-port "$REDIS_PORT" --redis-pid "$REDIS_PID")
fi

if [[ "${CLUSTER:-0}" == "1" ]]; then
    start_cluster "$JAR" "$CLUSTER_DIR"
    echo "== cluster leader on 127.0.0.1:$CLUSTER_LEADER; node PIDs $CLUSTER_PIDS"
    BENCH_ARGS+=(--cluster-port "$CLUSTER_LEADER" --cluster-pid "$CLUSTER_PIDS"
        --cluster-addresses "127.0.0.1:$BASE_PORT,127.0.0.1:$((BASE_PORT + 2)),127.0.0.1:$((BASE_PORT + 4))"
        --warmup 15)
    if [[ $RUN_ETCD == 1 ]]; then
        start_etcd "$OUT_DIR/etcd" "${ETCD_BASE_PORT:-23790}" "${SERVER_PIN[@]}"
        echo "== etcd $(etcd --version | head -1 | awk '{print $3}') members at $ETCD_ENDPOINTS; PIDs $ETCD_PIDS"
        BENCH_ARGS+=(--etcd-endpoints "$ETCD_ENDPOINTS" --etcd-pid "$ETCD_PIDS")
    fi
fi

echo "== machine: $(nproc) cores, $(grep MemTotal /proc/meminfo | awk '{print int($2/1024)" MB"}'), $(java -version 2>&1 | head -1)$(command -v redis-server >/dev/null && echo ", $(redis-server --version | cut -d' ' -f1-3)")"
echo "== load now: $(cut -d' ' -f1-3 /proc/loadavg)"

# shellcheck disable=SC2086
"${BENCH_PIN[@]}" java -Xms512m -Xmx512m ${BENCH_JAVA_OPTS:-} -cp "bench/target/classes:bench/target/lib/*:$CLIENT_JAR" dev.leasehold.bench.Bench \
    "${BENCH_ARGS[@]}" --out "$OUT_DIR/table.md" "$@" | tee "$OUT_DIR/bench.log"

if [[ "${CLUSTER:-0}" == "1" && "${FAILOVER_ROUNDS:-5}" != "0" ]]; then
    echo "== cluster failover, ${FAILOVER_ROUNDS:-5} rounds (kill -9 of the leader, restart, wait until all ready)"
    java -cp "bench/target/classes" dev.leasehold.bench.Failover \
        --ports "$BASE_PORT,$((BASE_PORT + 2)),$((BASE_PORT + 4))" \
        --http-ports "$((BASE_PORT + 1)),$((BASE_PORT + 3)),$((BASE_PORT + 5))" \
        --dir "$CLUSTER_DIR" --rounds "${FAILOVER_ROUNDS:-5}" --out "$OUT_DIR/table.md" | tee -a "$OUT_DIR/bench.log"
fi

echo "== done in $(( $(date +%s) - START )) s; logs and table in $OUT_DIR"
