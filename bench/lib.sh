# Helpers shared by the bench scripts (bench/run.sh, bench/watch.sh, bench/spring-lock.sh); sourced, not run.
#
# Every process started here is remembered by PID and stopped on exit (also on failure or
# Ctrl-C), and only those: SIGTERM, then SIGKILL after a bound. A script that has more to undo
# defines bench_on_exit, which runs after the processes are stopped.

STARTED_PIDS=()

# stop_pid PID [SECONDS]: SIGTERM, wait up to SECONDS (default 10) for it to end, then SIGKILL.
stop_pid() {
    local pid=$1 tenths=$(( ${2:-10} * 10 )) i
    kill -0 "$pid" 2>/dev/null || return 0
    kill "$pid" 2>/dev/null || true
    for (( i = 0; i < tenths; i++ )); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

cleanup() {
    local i
    for (( i = ${#STARTED_PIDS[@]} - 1; i >= 0; i-- )); do
        stop_pid "${STARTED_PIDS[$i]}"
    done
    if declare -F bench_on_exit >/dev/null; then
        bench_on_exit
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# module_jar DIR NAME: the jar DIR/NAME-<version>.jar that the Maven build wrote (not its -tests,
# -sources, -javadoc, -embedded or -plain jar); fails with the command to run when there is none.
module_jar() {
    local f
    for f in "$1/$2"-[0-9]*.jar; do
        case $f in
            *-tests.jar|*-sources.jar|*-javadoc.jar|*-embedded.jar|*-plain.jar) continue ;;
        esac
        if [[ -f $f ]]; then
            echo "$f"
            return 0
        fi
    done
    echo "no $1/$2-<version>.jar: run ./mvnw -B package -DskipTests first (or leave SKIP_BUILD unset)" >&2
    return 1
}

# start_cluster JAR DIR: starts a three-node cluster with bin/leasehold-cluster (its nodes on
# BASE_PORT and the ports above it; the caller stops it with `bin/leasehold-cluster stop DIR`) and
# waits up to 120 s for a leader: the node whose Raft role metric says "leader, serving" (3), as
# `bin/leasehold-cluster status` reads it. Sets CLUSTER_LEADER (its protocol port) and
# CLUSTER_PIDS (the three node PIDs, comma-separated).
start_cluster() {
    local jar=$1 dir=$2 n role
    LEASEHOLD_SERVER_JAR="$jar" bin/leasehold-cluster start "$dir"
    CLUSTER_LEADER=""
    for _ in $(seq 1 600); do
        for n in 0 1 2; do
            role=$(curl -s "http://127.0.0.1:$((BASE_PORT + 2 * n + 1))/actuator/prometheus" 2>/dev/null \
                | awk '/^leasehold_raft_role /{print int($2)}' || true)
            if [[ "$role" == 3 ]]; then CLUSTER_LEADER=$((BASE_PORT + 2 * n)); break; fi
        done
        [[ -n "$CLUSTER_LEADER" ]] && break
        sleep 0.2
    done
    [[ -n "$CLUSTER_LEADER" ]] || { echo "cluster: no leader after 120 s; logs in $dir"; return 1; }
    CLUSTER_PIDS=$(cat "$dir"/n1.pid "$dir"/n2.pid "$dir"/n3.pid | paste -sd,)
}

# start_server LOG COMMAND...: runs COMMAND, a Leasehold server started with --leasehold.port=0
# and --server.port=0, in the background with its output in LOG; waits (up to 120 s) until it has
# logged the ports it bound and its readiness probe answers UP. Sets SERVER_PID, SERVER_PORT
# (protocol) and SERVER_HTTP (Actuator). The server picks its own ports, so two runs never race
# for one.
start_server() {
    local log=$1 i
    shift
    : >"$log" # created here: the background child opens it only once it runs, which a loaded box delays
    "$@" >"$log" 2>&1 &
    SERVER_PID=$!
    STARTED_PIDS+=("$SERVER_PID")
    SERVER_PORT=""
    SERVER_HTTP=""
    for (( i = 0; i < 600; i++ )); do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "server died:" >&2
            tail -30 "$log" >&2
            return 1
        fi
        [[ -n $SERVER_PORT ]] || SERVER_PORT=$(sed -n 's/.*Leasehold protocol listening on .*:\([0-9][0-9]*\) (.*/\1/p' "$log" | head -1)
        [[ -n $SERVER_HTTP ]] || SERVER_HTTP=$(sed -n 's/.*Netty started on port \([0-9][0-9]*\).*/\1/p' "$log" | head -1)
        if [[ -n $SERVER_PORT && -n $SERVER_HTTP ]] \
                && curl -sf "http://127.0.0.1:$SERVER_HTTP/actuator/health/readiness" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.2
    done
    echo "server not ready after 120 s; log: $log" >&2
    return 1
}

# require_redis: fails, naming the command that installs it, when redis-server is missing.
# (A benchmark does not install system packages: that needs root and changes the machine.)
require_redis() {
    if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
        echo "redis-server and redis-cli are needed for the Redis targets; install them, e.g." >&2
        echo "    sudo apt-get install -y redis-server      # Debian, Ubuntu" >&2
        echo "or leave the Redis targets out: --targets leasehold,client" >&2
        exit 1
    fi
}

# free_port: a loopback port that is free now. Only for Redis: `redis-server --port 0` means "no
# TCP listener", so Redis cannot bind port 0 and report it as the Leasehold server does. Bash
# cannot bind a socket, hence python3. Another process could take the port before Redis binds
# it; Redis then fails to start and start_redis says so.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_redis DIR [PREFIX...]: redis-server on a free loopback port, no persistence, its log and
# working files in DIR, started under PREFIX (e.g. taskset -c 0); waits until it answers PING.
# Sets REDIS_PID and REDIS_PORT.
start_redis() {
    local dir=$1 i
    shift
    REDIS_PORT=$(free_port)
    "$@" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --maxclients 20000 \
        --daemonize no --logfile "$dir/redis.log" --dir "$dir" &
    REDIS_PID=$!
    STARTED_PIDS+=("$REDIS_PID")
    for (( i = 0; i < 100; i++ )); do
        redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0
        if ! kill -0 "$REDIS_PID" 2>/dev/null; then
            echo "redis-server died:" >&2
            tail -10 "$dir/redis.log" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "redis-server not answering on 127.0.0.1:$REDIS_PORT after 10 s" >&2
    return 1
}

# require_etcd: fails, naming the command that installs it, when etcd is missing.
require_etcd() {
    if ! command -v etcd >/dev/null; then
        echo "etcd is needed for the etcd target (CLUSTER=1); install it, e.g." >&2
        echo "    sudo apt-get install -y etcd-server      # Debian (etcd 3.4)" >&2
        echo "or leave it out: ETCD=0 CLUSTER=1 bench/run.sh" >&2
        exit 1
    fi
}

# start_etcd DIR BASE [PREFIX...]: a three-member etcd cluster on loopback, members e1..e3 with
# client ports BASE, BASE+2, BASE+4 and peer ports one above each (members must know each
# other's peer addresses before they start, so these are fixed ports), data in DIR/eN, started
# under PREFIX; waits until every member reports healthy. Defaults of etcd otherwise (fsync on
# every commit, as Leasehold's cluster does). Sets ETCD_PIDS (comma-separated) and ETCD_ENDPOINTS.
start_etcd() {
    local dir=$1 base=$2 n i initial="" pids=() endpoints=()
    shift 2
    for n in 1 2 3; do
        initial+="${initial:+,}e$n=http://127.0.0.1:$(( base + 2 * (n - 1) + 1 ))"
    done
    for n in 1 2 3; do
        local client=$(( base + 2 * (n - 1) )) peer=$(( base + 2 * (n - 1) + 1 ))
        mkdir -p "$dir/e$n"
        "$@" etcd --name "e$n" --data-dir "$dir/e$n/data" \
            --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
            --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
            --initial-cluster "$initial" --initial-cluster-state new --initial-cluster-token leasehold-bench \
            --log-level warn >"$dir/e$n/etcd.log" 2>&1 &
        pids+=("$!")
        STARTED_PIDS+=("$!")
        endpoints+=("http://127.0.0.1:$client")
    done
    ETCD_PIDS=$(IFS=,; echo "${pids[*]}")
    ETCD_ENDPOINTS=$(IFS=,; echo "${endpoints[*]}")
    for (( i = 0; i < 300; i++ )); do
        local healthy=0 e
        for e in "${endpoints[@]}"; do
            curl -sf "$e/health" 2>/dev/null | grep -q '"health":"true"' && healthy=$(( healthy + 1 ))
        done
        [[ $healthy == 3 ]] && return 0
        for n in "${pids[@]}"; do
            if ! kill -0 "$n" 2>/dev/null; then
                echo "an etcd member died:" >&2
                tail -10 "$dir"/e*/etcd.log >&2
                return 1
            fi
        done
        sleep 0.2
    done
    echo "etcd not healthy after 60 s; logs in $dir/e*/etcd.log" >&2
    return 1
}
