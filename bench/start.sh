#!/usr/bin/env bash
# start.sh: how long a Leasehold server takes from `java` to its first granted Acquire (BENCHMARKS.md,
# "Start time"). Each run starts the server on a fresh temporary data directory with ports 0, and
# bench/start_probe.py times it: from just before the process is created to the first `A` answer
# to an Acquire (wait 0) over the protocol; it also reads Spring's "Started ... in X seconds
# (process running for Y)". The server is stopped (SIGTERM) after each run.
#
#   bench/start.sh [-n RUNS] [NAME=COMMAND ...]
#
# Each NAME=COMMAND is one variant (COMMAND split on spaces, e.g.
# 'cds=java -XX:SharedArchiveFile=target/cds/leasehold.jsa -jar target/cds/leasehold.jar');
# the script adds --leasehold.port=0 --server.port=0 --leasehold.data-dir=<fresh dir>. Variants run
# interleaved (A B A B ...), so that a change of load hits both sides alike; the load average is
# printed with every run. Without variants: `jar` (java -jar target/leasehold-<v>.jar, as users start
# it) and, when `./mvnw package` built it, `cds` (the extracted jar with its AppCDS archive,
# target/cds/, as bin/leasehold-cluster and the Dockerfile start it). RUNS defaults to 3.
# Prints every run, then the median of each variant. Logs are kept in a temporary directory,
# named at the end.
set -euo pipefail

cd "$(dirname "$0")/.."
source bench/lib.sh

runs=3
if [[ ${1:-} == -n ]]; then
    runs=$2
    shift 2
fi

variants=("$@")
if (( ${#variants[@]} == 0 )); then
    jar=$(module_jar target leasehold)
    variants=("jar=java -jar $jar")
    if [[ -f target/cds/leasehold.jsa && -f target/cds/leasehold.jar && ! $jar -nt target/cds/leasehold.jsa ]]; then
        variants+=("cds=java -XX:SharedArchiveFile=target/cds/leasehold.jsa -jar target/cds/leasehold.jar")
    fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-start.XXXXXX")
declare -A grants
echo "start to first grant; $(nproc) cores; $(uptime | sed 's/.*load/load/')"
printf '%-10s %4s %9s %10s %10s  %s\n' variant run grant_s started_s running_s "load (1 min) before"
for (( r = 1; r <= runs; r++ )); do
    for v in "${variants[@]}"; do
        name=${v%%=*}
        read -r -a cmd <<<"${v#*=}"
        data="$work/$name-$r-data"
        load=$(cut -d' ' -f1 /proc/loadavg)
        line=$(python3 bench/start_probe.py "$work/$name-$r.log" "${cmd[@]}" \
            --leasehold.port=0 --server.port=0 --leasehold.data-dir="$data")
        rm -rf "$data"
        eval "$line" # grant_s=… started_s=… running_s=…
        grants[$name]+="$grant_s "
        printf '%-10s %4d %9s %10s %10s  %s\n' "$name" "$r" "$grant_s" "$started_s" "$running_s" "$load"
    done
done
echo "median start to first grant (s):"
for v in "${variants[@]}"; do
    name=${v%%=*}
    # shellcheck disable=SC2086
    printf '  %-10s %s\n' "$name" "$(printf '%s\n' ${grants[$name]} | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')"
done
echo "after: $(uptime | sed 's/.*load/load/'); logs in $work"
