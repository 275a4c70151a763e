#!/usr/bin/env bash
# The three-node cluster alone: W1 sync, W1 pipelined, W2 and latency against the leader, then
# kill -9 failover rounds. A shortcut for `CLUSTER=1 bench/run.sh --targets cluster` (no single
# node and no Redis are started then); bench/run.sh with CLUSTER=1 and no --targets puts the
# cluster beside single-node and Redis in one table.
#
#   bench/run-cluster.sh                         # about 2 minutes
#   FAILOVER_ROUNDS=20 bench/run-cluster.sh --duration 5
set -euo pipefail
cd "$(dirname "$0")/.."
CLUSTER=1 exec bench/run.sh --targets cluster --workloads "${WORKLOADS:-w1,lat,w1p,w2}" "$@"
