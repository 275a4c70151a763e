#!/usr/bin/env bash
# The three-node cluster on this machine (issue 12): W1 sync, W1 pipelined and W2 against the
# leader, with bin/leasehold-cluster (3 server processes, loopback). Compare with bench/run.sh.
#
#   bench/run-cluster.sh                       # about 2 minutes
#   bench/run-cluster.sh --duration 5          # any Bench option
#
# Environment: SKIP_BUILD=1 reuses target/ and bench/target; OUT_DIR (default a new temp dir);
# BASE_PORT (default 27420) for the cluster's ports.
set -euo pipefail

cd "$(dirname "$0")/.."
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/leasehold-bench-cluster.XXXXXX)}
export BASE_PORT=${BASE_PORT:-27420}
CLUSTER_DIR="$OUT_DIR/cluster"

cleanup() {
    bin/leasehold-cluster stop "$CLUSTER_DIR" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    echo "== building server and load generator"
    ./mvnw -B -q package -DskipTests
    rm -rf bench/target/lib
    ./mvnw -B -q -f bench/pom.xml package
fi

bin/leasehold-cluster start "$CLUSTER_DIR"

# The leader is the node that grants: probe each with a wait=0 Acquire (and release it).
leader_port=""
for _ in $(seq 1 600); do
    leader_port=$(python3 - "$BASE_PORT" <<'PY'
import socket, struct, sys
base = int(sys.argv[1])
for port in (base, base + 2, base + 4):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=0.5)
        s.settimeout(2)
        s.sendall(b"A" + bytes([0, 5]) + struct.pack(">Q", 1) + b"bench-probe\n")
        r = s.recv(64)
        if r[:1] == b"A":
            s.sendall(b"R" + r[9:17] + b"bench-probe\n")
            s.recv(64)
            print(port)
            break
    except OSError:
        pass
PY
)
    [[ -n "$leader_port" ]] && break
    sleep 0.2
done
[[ -n "$leader_port" ]] || { echo "no leader"; exit 1; }
idx=$(( (leader_port - BASE_PORT) / 2 + 1 ))
leader_pid=$(cat "$CLUSTER_DIR/n$idx.pid")
echo "== leader n$idx on 127.0.0.1:$leader_port (pid $leader_pid); load now: $(cut -d' ' -f1-3 /proc/loadavg)"

java -Xms512m -Xmx512m -cp "bench/target/classes:bench/target/lib/*" dev.leasehold.bench.Bench \
    --targets leasehold --leasehold-port "$leader_port" --leasehold-pid "$leader_pid" \
    --workloads w1,w1p,w2 --out "$OUT_DIR/table.md" "$@" | tee "$OUT_DIR/bench.log"
echo "== logs and table in $OUT_DIR"
