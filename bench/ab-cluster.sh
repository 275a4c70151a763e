#!/usr/bin/env bash
# Two three-node clusters side by side, A and B, measured in alternating slices of W1 sync through
# the official client (bench/NOTES.md, "Changes, measured side by side"). On a shared machine
# sequential runs minutes apart differ by 2x; two clusters running at once see the same noise.
#
#   A_ARGS="" B_ARGS="--leasehold.cluster.raft-properties[raft.server.log.force.sync.num]=16" bench/ab-cluster.sh
#   A_JAR=old.jar B_JAR=new.jar bench/ab-cluster.sh          # two builds instead of two settings
#   B_RAFT_TLS=1 bench/ab-cluster.sh                         # plaintext Raft (A) against mutual TLS (B)
#
# Both clusters start (bin/leasehold-cluster, BASE_PORT A_BASE=28420 and B_BASE=29420, each with
# its Spring arguments A_ARGS / B_ARGS on every node), both are warmed by WARM seconds (default 60)
# of W1 at the same time, then SLICES (default 4) pairs of SLICE-second (default 15) W1 sync slices
# run A B, B A, A B, ..., each its own load generator JVM (2 s warm-up, THREADS=16 threads). The
# JVMs are still not warm after a minute on 2 shared cores (rates rise slice by slice), hence the
# alternating order; compare within a pair, not across pairs. It prints one
# line per slice (load average at its start) and the medians, and writes them to OUT_DIR/ab.txt.
# Every process it started is stopped on exit by PID; each generator is killed 60 s after its
# slice should have ended, and cluster start-up gives up after 120 s.
#
# Needs the server jar, the client jar and the generator built (bench/run.sh builds them, or
# ./mvnw -B package -DskipTests && ./mvnw -B -f bench/pom.xml package).
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/leasehold-ab.XXXXXX)}
mkdir -p "$OUT_DIR"
A_BASE=${A_BASE:-28420}
B_BASE=${B_BASE:-29420}
WARM=${WARM:-60}
SLICES=${SLICES:-4}
SLICE=${SLICE:-15}
THREADS=${THREADS:-16}
JAR=$(module_jar target leasehold)
A_JAR=${A_JAR:-$JAR}
B_JAR=${B_JAR:-$JAR}
CLIENT_JAR=${CLIENT_JAR:-$(module_jar client/target leasehold-client)}
[[ -d bench/target/classes ]] || { echo "no bench/target/classes: ./mvnw -B -f bench/pom.xml package" >&2; exit 127; }

bench_on_exit() {
    BASE_PORT=$A_BASE bin/leasehold-cluster stop "$OUT_DIR/a" >/dev/null 2>&1 || true
    BASE_PORT=$B_BASE bin/leasehold-cluster stop "$OUT_DIR/b" >/dev/null 2>&1 || true
}

# leader BASE: the protocol port of the node whose Raft role metric says "leader, serving" (3).
leader() {
    local base=$1 n role
    for _ in $(seq 1 600); do
        for n in 0 1 2; do
            role=$(curl -s "http://127.0.0.1:$((base + 2 * n + 1))/actuator/prometheus" 2>/dev/null \
                | awk '/^leasehold_raft_role /{print int($2)}' || true)
            [[ "$role" == 3 ]] && { echo $((base + 2 * n)); return 0; }
        done
        sleep 0.2 # polling the metric: there is no event to wait on from a shell
    done
    echo "cluster at $base: no serving leader after 120 s" >&2
    return 1
}

# start_gen SIDE SECONDS LOG: one W1 sync run of the generator (2 s warm-up) against cluster SIDE
# (a or b), in the background, bounded by timeout; sets GEN_PID (and remembers it for cleanup).
start_gen() {
    local side=$1 secs=$2 log=$3 base leader_port pids
    if [[ $side == a ]]; then base=$A_BASE; leader_port=$A_LEADER; pids=$A_PIDS; else base=$B_BASE; leader_port=$B_LEADER; pids=$B_PIDS; fi
    timeout -k 5 $((secs + 60)) java -Xms256m -Xmx256m -cp "bench/target/classes:bench/target/lib/*:$CLIENT_JAR" \
        dev.leasehold.bench.Bench --targets cluster-client --workloads w1 --threads "$THREADS" \
        --cluster-port "$leader_port" --cluster-pid "$pids" \
        --cluster-addresses "127.0.0.1:$base,127.0.0.1:$((base + 2)),127.0.0.1:$((base + 4))" \
        --warmup 2 --duration "$secs" >"$log" 2>&1 &
    GEN_PID=$!
    STARTED_PIDS+=("$GEN_PID")
}

# finish PID LOG: waits for a generator (in this shell: it is this shell's child) and sets LINE to
# its W1 sync line.
finish() {
    wait "$1" || { echo "generator failed: $2" >&2; tail -5 "$2" >&2; return 1; }
    LINE=$(grep 'W1 sync .*pairs/s  acq' "$2" | tail -1 | sed 's/^ *//')
}

echo "A: ${A_JAR} ${A_ARGS:-(defaults)} RAFT_TLS=${A_RAFT_TLS:-0}" | tee "$OUT_DIR/ab.txt"
echo "B: ${B_JAR} ${B_ARGS:-(defaults)} RAFT_TLS=${B_RAFT_TLS:-0}" | tee -a "$OUT_DIR/ab.txt"
STARTED_AT=$(date +%s)
RAFT_TLS=${A_RAFT_TLS:-0} BASE_PORT=$A_BASE NODE_ARGS="${A_ARGS:-}" LEASEHOLD_SERVER_JAR="$A_JAR" bin/leasehold-cluster start "$OUT_DIR/a" >/dev/null
RAFT_TLS=${B_RAFT_TLS:-0} BASE_PORT=$B_BASE NODE_ARGS="${B_ARGS:-}" LEASEHOLD_SERVER_JAR="$B_JAR" bin/leasehold-cluster start "$OUT_DIR/b" >/dev/null
A_LEADER=$(leader "$A_BASE")
B_LEADER=$(leader "$B_BASE")
A_PIDS=$(cat "$OUT_DIR"/a/n{1,2,3}.pid | paste -sd,)
B_PIDS=$(cat "$OUT_DIR"/b/n{1,2,3}.pid | paste -sd,)
echo "both serving $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT_DIR/ab.txt"

# Warm both at once, so that neither has compiled more of its hot path when the slices start.
start_gen a "$WARM" "$OUT_DIR/warm-a.log"
wa=$GEN_PID
start_gen b "$WARM" "$OUT_DIR/warm-b.log"
wb=$GEN_PID
finish "$wa" "$OUT_DIR/warm-a.log"
echo "warm A: $LINE" | tee -a "$OUT_DIR/ab.txt"
finish "$wb" "$OUT_DIR/warm-b.log"
echo "warm B: $LINE" | tee -a "$OUT_DIR/ab.txt"

# Pairs alternate their order (A B, B A, A B, ...): the clusters still warm up during the slices and
# the machine's load drifts, and a fixed order would hand that trend to the side that runs second.
for i in $(seq 1 "$SLICES"); do
    order="a b"
    (( i % 2 == 0 )) && order="b a"
    for side in $order; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        start_gen "$side" "$SLICE" "$OUT_DIR/slice-$i-$side.log"
        finish "$GEN_PID" "$OUT_DIR/slice-$i-$side.log"
        echo "$i ${side^^} load $load $LINE" | tee -a "$OUT_DIR/ab.txt"
    done
done
echo "end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg), $(( $(date +%s) - STARTED_AT )) s" | tee -a "$OUT_DIR/ab.txt"

# Medians per side, and B/A per slice pair (pairs/s): "B wins every slice" needs every ratio > 1.
awk '
    $2 == "A" || $2 == "B" {
        s = $2; i = $1
        for (f = 1; f <= NF; f++) {
            if ($f == "pairs/s") rate[s, i] = $(f - 1)
            if ($f == "p50" && $(f - 1) == "acq") p50[s, i] = $(f + 1) / 1000
            if ($f == "p99" && !((s, i) in p99)) p99[s, i] = $(f + 1) / 1000 # the first p99 is the acquire one
            if ($f == "CPU" && $(f - 1) == "server") cpu[s, i] = $(f + 1)
        }
        n = i > n ? i : n
    }
    function median(arr, s,   k, v, m, t, j) {
        m = 0
        for (k = 1; k <= n; k++) if ((s, k) in arr) v[++m] = arr[s, k] + 0
        for (k = 1; k <= m; k++) for (j = k + 1; j <= m; j++) if (v[j] < v[k]) { t = v[k]; v[k] = v[j]; v[j] = t }
        return m == 0 ? "-" : (m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2)
    }
    END {
        wins = 0; ratios = ""
        for (k = 1; k <= n; k++) {
            r = rate["B", k] / rate["A", k]
            ratios = ratios sprintf(" %.2f", r)
            if (r > 1) wins++
        }
        for (s = 0; s < 2; s++) {
            side = s ? "B" : "A"
            printf "median %s: %s pairs/s, acquire p50 %.1f ms p99 %.1f ms, server CPU %s s per 1M pairs (%d slices)\n",
                side, median(rate, side), median(p50, side), median(p99, side), median(cpu, side), n
        }
        printf "B/A pairs/s per slice pair:%s; B faster in %d of %d\n", ratios, wins, n
    }' "$OUT_DIR/ab.txt" | tee -a "$OUT_DIR/ab.txt"
echo "logs in $OUT_DIR"
