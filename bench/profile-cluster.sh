#!/usr/bin/env bash
# Profiles the running nodes of a bin/leasehold-cluster directory for a window of a bench run:
# attaches async-profiler (bench/async-profiler.sh fetches it) to each node's JVM with jcmd
# after DELAY seconds, stops it DURATION seconds later and writes one collapsed stack file per
# node (threads=true: the thread is the first frame), so the shares are those of the measured
# window only, not of the JVMs' start-up and JIT compilation (which dominate a whole-life profile).
#
#   CLUSTER=1 OUT_DIR=/tmp/b bench/run.sh --targets cluster-client --workloads w1 --warmup 10 --duration 20 &
#   bench/profile-cluster.sh /tmp/b/cluster 25 15 /tmp/prof     # once the nodes are up: 25 s in, 15 s long
#   bench/profile-cluster.sh --summary /tmp/prof                # CPU share per thread group, per node
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
summary() { # per node: samples, and the share of each thread (numbers in names folded)
    local f
    for f in "$1"/*.collapsed; do
        echo "== $(basename "$f") ($(awk '{s+=$NF} END{print s}' "$f") samples)"
        awk '{n=$NF; split($0,a,";"); t=a[1]; gsub(/tid=[0-9]+/,"",t); gsub(/[0-9]+/,"N",t); s[t]+=n; tot+=n}
             END{for(k in s) printf "%6.1f%% %s\n", 100*s[k]/tot, k}' "$f" | sort -rn | head -"${TOP:-15}"
    done
}
if [[ "${1:-}" == "--summary" ]]; then summary "$2"; exit 0; fi
dir=${1:?usage: bench/profile-cluster.sh CLUSTER_DIR DELAY DURATION OUT | --summary OUT}
delay=${2:?} duration=${3:?} out=${4:?}
"$here/async-profiler.sh" /dev/null >/dev/null # fetch it
lib=$(ls "$here"/target/async-profiler-*/linux-x64/libasyncProfiler.so | head -1)
mkdir -p "$out"
# jcmd parses key=value itself: the inner quotes pass the options to the agent whole.
sleep "$delay"
for id in n1 n2 n3; do
    jcmd "$(cat "$dir/$id.pid")" JVMTI.agent_load "$lib" "\"start,event=cpu,interval=${INTERVAL:-1ms},threads\"" >/dev/null
done
sleep "$duration"
for id in n1 n2 n3; do
    jcmd "$(cat "$dir/$id.pid")" JVMTI.agent_load "$lib" "\"stop,collapsed,file=$out/$id.collapsed\"" >/dev/null
done
summary "$out"
