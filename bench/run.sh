#!/usr/bin/env bash
# Leasehold vs Redis, side by side, on this machine (issue 6). Loopback only.
#
#   bench/run.sh                 # full run (about 5 minutes), prints the table
#   bench/run.sh --duration 5    # any Bench option (see bench/src/.../Bench.java usage())
#
# Environment:
#   SKIP_BUILD=1        reuse target/leasehold-*.jar and bench/target (no Maven)
#   SERVER_JAVA_OPTS    extra JVM options for the Leasehold server (e.g. a JFR recording)
#   BENCH_JAVA_OPTS     extra JVM options for the load generator (e.g. a JFR recording of the client)
#   SERVER_JAR          the server jar to measure (default target/leasehold-<v>.jar), for before/after runs
#   SERVER_ARGS         extra Spring arguments for the server (e.g. --leasehold.io-threads=1)
#   OUT_DIR             where logs and the table go (default: a new temp dir)
#   SERVER_CPUS, BENCH_CPUS   pin the servers (Leasehold and Redis) and the load generator to
#                       these CPUs (taskset -c lists, e.g. 0 and 1): separates preemption by the
#                       generator from the servers' own tail (issue 15, must-have 4)
#   CLUSTER=1           also start a three-node cluster (bin/leasehold-cluster, 3 more JVMs) and
#                       measure its leader as another column (W1 sync, W1 pipelined, W2, latency),
#                       then its failover: FAILOVER_ROUNDS (default 5) rounds of kill -9 of the
#                       leader → first grant on a fresh session. CLUSTER_BASE_PORT (default 27420)
#                       and the 14 ports above it are the cluster's.
#
# It builds the server (tests skipped: CI runs them) and this load generator, starts the server
# (fresh temp data dir) and redis-server (installed from Debian if missing; no persistence),
# runs every workload against both, and stops both by PID on exit, whatever happens.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/leasehold-bench.XXXXXX)}
mkdir -p "$OUT_DIR"
SERVER_PID=""
REDIS_PID=""
CLUSTER_DIR="$OUT_DIR/cluster"

cleanup() {
    # Stop exactly the processes this script started.
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ -n "$REDIS_PID" ]] && kill -0 "$REDIS_PID" 2>/dev/null; then
        kill "$REDIS_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$REDIS_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$REDIS_PID" 2>/dev/null || true
    fi
    if [[ "${CLUSTER:-0}" == "1" ]]; then
        BASE_PORT=${CLUSTER_BASE_PORT:-27420} bin/leasehold-cluster stop "$CLUSTER_DIR" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

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
JAR=${SERVER_JAR:-$(ls target/leasehold-*.jar | grep -v -- '-client.jar' | head -1)}

if ! command -v redis-server >/dev/null; then
    echo "== installing redis-server (Debian)"
    apt-get install -y redis-server >"$OUT_DIR/apt.log" 2>&1 || { apt-get update >>"$OUT_DIR/apt.log" 2>&1 && apt-get install -y redis-server >>"$OUT_DIR/apt.log" 2>&1; }
fi

LH_PORT=$(free_port)
LH_HTTP=$(free_port)
REDIS_PORT=$(free_port)

echo "== starting Leasehold ($JAR) on 127.0.0.1:$LH_PORT"
# recovery-grace=0s: a fresh data dir needs no grace; the property is ignored where it does not exist.
# shellcheck disable=SC2086
SERVER_PIN=(); BENCH_PIN=()
[[ -n "${SERVER_CPUS:-}" ]] && SERVER_PIN=(taskset -c "$SERVER_CPUS")
[[ -n "${BENCH_CPUS:-}" ]] && BENCH_PIN=(taskset -c "$BENCH_CPUS")
"${SERVER_PIN[@]}" java ${SERVER_JAVA_OPTS:-} -jar "$JAR" \
    --leasehold.port="$LH_PORT" --server.port="$LH_HTTP" \
    --leasehold.data-dir="$OUT_DIR/data" --leasehold.recovery-grace=0s \
    ${SERVER_ARGS:-} >"$OUT_DIR/leasehold.log" 2>&1 &
SERVER_PID=$!

echo "== starting redis-server on 127.0.0.1:$REDIS_PORT"
"${SERVER_PIN[@]}" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --maxclients 20000 \
    --daemonize no --logfile "$OUT_DIR/redis.log" --dir "$OUT_DIR" &
REDIS_PID=$!

for _ in $(seq 1 300); do
    if curl -sf "http://127.0.0.1:$LH_HTTP/actuator/health/readiness" >/dev/null 2>&1; then break; fi
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "server died:"; tail -30 "$OUT_DIR/leasehold.log"; exit 1; }
    sleep 0.2
done
curl -sf "http://127.0.0.1:$LH_HTTP/actuator/health/readiness" >/dev/null || { echo "server not ready"; exit 1; }
for _ in $(seq 1 100); do
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
done

CLUSTER_ARGS=()
if [[ "${CLUSTER:-0}" == "1" ]]; then
    export BASE_PORT=${CLUSTER_BASE_PORT:-27420}
    LEASEHOLD_SERVER_JAR="$JAR" bin/leasehold-cluster start "$CLUSTER_DIR"
    # The leader is the node that grants: probe each with a wait=0 Acquire (1 s lease, left to end).
    cluster_leader=""
    for _ in $(seq 1 600); do
        cluster_leader=$(python3 - "$BASE_PORT" <<'PY'
import socket, struct, sys
base = int(sys.argv[1])
for port in (base, base + 2, base + 4):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=0.5)
        s.settimeout(2)
        s.sendall(b"A" + bytes([0, 1]) + struct.pack(">Q", 1) + b"bench-leader-probe\n")
        if s.recv(64)[:1] == b"A":
            print(port)
            break
    except OSError:
        pass
PY
)
        [[ -n "$cluster_leader" ]] && break
        sleep 0.2
    done
    [[ -n "$cluster_leader" ]] || { echo "cluster: no leader"; exit 1; }
    cluster_pids=$(cat "$CLUSTER_DIR"/n1.pid "$CLUSTER_DIR"/n2.pid "$CLUSTER_DIR"/n3.pid | paste -sd,)
    echo "== cluster leader on 127.0.0.1:$cluster_leader; node PIDs $cluster_pids"
    CLUSTER_ARGS=(--cluster-port "$cluster_leader" --cluster-pid "$cluster_pids")
fi

echo "== machine: $(nproc) cores, $(grep MemTotal /proc/meminfo | awk '{print int($2/1024)" MB"}'), $(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f1-3)"
echo "== load now: $(cut -d' ' -f1-3 /proc/loadavg)"

# The official client (issue 15) comes from the root build's client module.
CLIENT_JAR=${CLIENT_JAR:-$(ls client/target/leasehold-client-*.jar | grep -v -E -- '-(sources|javadoc|tests)\.jar$' | head -1)}
# shellcheck disable=SC2086
"${BENCH_PIN[@]}" java -Xms512m -Xmx512m ${BENCH_JAVA_OPTS:-} -cp "bench/target/classes:bench/target/lib/*:$CLIENT_JAR" dev.leasehold.bench.Bench \
    --leasehold-port "$LH_PORT" --leasehold-pid "$SERVER_PID" --leasehold-http "$LH_HTTP" \
    --redis-port "$REDIS_PORT" --redis-pid "$REDIS_PID" "${CLUSTER_ARGS[@]}" \
    --out "$OUT_DIR/table.md" "$@" | tee "$OUT_DIR/bench.log"

if [[ "${CLUSTER:-0}" == "1" && "${FAILOVER_ROUNDS:-5}" != "0" ]]; then
    echo "== cluster failover, ${FAILOVER_ROUNDS:-5} rounds (kill -9 of the leader, restart, wait until all ready)"
    java -cp "bench/target/classes" dev.leasehold.bench.Failover \
        --ports "$BASE_PORT,$((BASE_PORT + 2)),$((BASE_PORT + 4))" \
        --http-ports "$((BASE_PORT + 1)),$((BASE_PORT + 3)),$((BASE_PORT + 5))" \
        --dir "$CLUSTER_DIR" --rounds "${FAILOVER_ROUNDS:-5}" --out "$OUT_DIR/table.md" | tee -a "$OUT_DIR/bench.log"
fi

echo "== done in $(( $(date +%s) - START )) s; logs and table in $OUT_DIR"
