#!/usr/bin/env bash
# Prints the JVM option that runs async-profiler (CPU, with kernel stacks) for a whole JVM and
# writes its flame graph on exit; fetches async-profiler from Maven Central on first use
# (tools.profiler:async-profiler, linux-x64) into bench/target/async-profiler.
#
#   BENCH_JAVA_OPTS="$(bench/async-profiler.sh /tmp/client-w1.html)" \
#       bench/run.sh --workloads w1 --targets client        # the official client under W1
#   SERVER_JAVA_OPTS="$(bench/async-profiler.sh /tmp/server.html)" bench/run.sh --workloads w1
#
# OUTPUT ending in .html gives a flame graph; .collapsed gives one line per stack (with
# threads=true, the thread is the first frame): the text to grep or sum. Kernel frames need
# root or kernel.perf_event_paranoid <= 1; otherwise only Java and native frames are shown.
# Profiling costs throughput (about half at a 2 ms interval on this 2-core machine): read the
# shares, not the rates, of a profiled run.
set -euo pipefail
cd "$(dirname "$0")"
VERSION=${ASYNC_PROFILER_VERSION:-4.2}
OUTPUT=${1:?usage: bench/async-profiler.sh OUTPUT.html|OUTPUT.collapsed [interval, default 2ms]}
INTERVAL=${2:-2ms}
DIR=target/async-profiler-$VERSION
LIB=$DIR/linux-x64/libasyncProfiler.so
if [[ ! -f "$LIB" ]]; then
    mkdir -p "$DIR"
    curl -sfL -m 120 -o "$DIR/ap.jar" \
        "https://repo1.maven.org/maven2/tools/profiler/async-profiler/$VERSION/async-profiler-$VERSION-linux-x64.jar" \
        || { echo "could not fetch async-profiler $VERSION from Maven Central" >&2; exit 1; }
    (cd "$DIR" && unzip -q -o ap.jar 'linux-x64/*')
fi
FORMAT=flamegraph
[[ "$OUTPUT" == *.collapsed ]] && FORMAT=collapsed
echo "-agentpath:$(pwd)/$LIB=start,event=cpu,interval=$INTERVAL,threads,$FORMAT,file=$OUTPUT"
