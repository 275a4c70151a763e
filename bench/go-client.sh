#!/usr/bin/env bash
# W1 sync and W2 (BENCHMARKS.md) through the Go client (clients/go/bench) and the Java client
# (Bench's target "client"), on one server, alternately: Java, Go, Java, Go, so both see the
# same machine noise. Needs Go, the server jar, the client jar and bench/target (SKIP_BUILD=1
# reuses them).
#
#   bench/go-client.sh                    # 2 rounds, 3 s warm-up, 10 s measured per workload
#   ROUNDS=3 bench/go-client.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/leasehold-go-bench.XXXXXX)}
mkdir -p "$OUT_DIR"
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
    ./mvnw -B -q package -DskipTests
    ./mvnw -B -q -f bench/pom.xml package
fi
JAR=$(module_jar target leasehold)
CLIENT_JAR=$(module_jar client/target leasehold-client)
(cd clients/go && go build -o "$OUT_DIR/go-bench" ./bench)
start_server "$OUT_DIR/leasehold.log" java -jar "$JAR" \
    --leasehold.address=127.0.0.1 --leasehold.port=0 --server.address=127.0.0.1 --server.port=0 \
    --leasehold.data-dir="$OUT_DIR/data" --leasehold.recovery-grace=0s
echo "== Leasehold on 127.0.0.1:$SERVER_PORT, pid $SERVER_PID; $(go version); $(java -version 2>&1 | head -1)"
for round in $(seq 1 "${ROUNDS:-2}"); do
    echo "== round $round, load $(cut -d' ' -f1-3 /proc/loadavg)"
    java -Xms512m -Xmx512m -cp "bench/target/classes:bench/target/lib/*:$CLIENT_JAR" dev.leasehold.bench.Bench \
        --leasehold-port "$SERVER_PORT" --leasehold-pid "$SERVER_PID" --targets client --workloads w1,w2 \
        --warmup 3 --duration 10 | grep -E "W1|W2" | sed 's/^/java: /'
    echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
    "$OUT_DIR/go-bench" -server "127.0.0.1:$SERVER_PORT" -workloads w1,w2 -warmup 3s -duration 10s | sed 's/^/go:   /'
done
