package dev.leasehold.bench;

/**
 * {@link Bench}'s command line and its targets: the usage text, which server each target talks
 * to, which workloads it can run, and the name its column shows.
 */
final class BenchTargets {

    private BenchTargets() {
    }

    static String usage() {
        return """
                usage: Bench --leasehold-port P --leasehold-pid PID --redis-port P --redis-pid PID [options]
                  --host 127.0.0.1       loopback address of both servers
                  --leasehold-http P     Leasehold's HTTP (Actuator) port: W2 then also reads the
                                         server's hand-off gap histogram (leasehold_handoff_seconds)
                  --threads 16           W1 load threads (one connection each)
                  --keys 64              distinct keys per W1 thread (cycled)
                  --depth 32             W1 pipelined: requests in flight per connection
                  --duration 10          seconds measured per workload
                  --warmup 3             seconds of load before measuring (not recorded)
                  --prewarm 0            seconds of W1 sync on each target before the first
                                         workload (not recorded): JIT-compiled server JVMs; the
                                         cluster's three nodes need minutes on 2 shared cores
                  --latency-seconds 5    one-session Ping / acquire latency run
                  --w2-waiters 16        W2 threads on one key
                  --w2-poll-micros 1000  Redis W2: sleep between SET NX attempts (0 = retry at once)
                  --w2-sweep 0,100,2000  Redis W2 also with these poll sleeps (workload w2sweep)
                  --w3-keys 200000       W3 held locks
                  --w4-sessions 10000    W4 idle sessions
                  --workloads w1,lat,w4,w1p,w2,w3,w2sweep   which to run, in this order
                  --targets leasehold,client,redis,redisson,redisson-fair
                                         leasehold = raw generator, client = the official client
                                         (one shared LeaseholdClient: w1, w2, lat only), redis = Jedis,
                                         redisson / redisson-fair = RLock / RFairLock (w1, w2 only),
                                         cluster = the leader of a 3-node cluster (w1, w1p, w2, lat;
                                         on by default when --cluster-port is given)
                  --cluster-port P --cluster-pid PID1,PID2,PID3   the cluster's leader, all nodes' PIDs
                  --cluster-addresses H:P,H:P,H:P  all three nodes, for cluster-client = the official
                                         client on the cluster (w1, w2, lat; on by default with them)
                  --etcd-endpoints URL,URL,URL --etcd-pid PID1,PID2,PID3   a three-member etcd:
                                         target etcd = jetcd Lock, a kept-alive lease per thread
                                         (w1, w2, lat; on by default when --etcd-endpoints is given)
                  --client-pool N        the official client's poolSize (default: the client's default)
                  --out FILE             also write the table (markdown) here
                """;
    }

    /**
     * Which server a target talks to: the official client and the raw generator share Leasehold;
     * {@code cluster} is the leader of a three-node cluster ({@code --cluster-port}, and
     * {@code --cluster-pid} as a comma-separated list of all three nodes for CPU and RSS).
     */
    static String server(String target) {
        return switch (target) {
            case "leasehold", "client" -> "leasehold";
            case "cluster", "cluster-client" -> "cluster";
            case "etcd" -> "etcd";
            default -> "redis";
        };
    }

    /** Which workloads a target can run (the library clients have no pipelined batch, no raw sessions). */
    static boolean supports(String target, String workload) {
        return switch (target) {
            case "leasehold", "redis" -> true;
            case "cluster" -> workload.equals("w1") || workload.equals("w1p") || workload.equals("w2") || workload.equals("lat");
            case "client", "cluster-client", "etcd" -> workload.equals("w1") || workload.equals("w2") || workload.equals("lat");
            default -> workload.equals("w1") || workload.equals("w2");
        };
    }

    static String display(String target) {
        return switch (target) {
            case "leasehold" -> "Leasehold, raw generator";
            case "client" -> "Leasehold, official client";
            case "redis" -> "Redis + Jedis";
            case "redisson" -> "Redis + Redisson RLock";
            case "redisson-fair" -> "Redis + Redisson RFairLock";
            case "cluster" -> "Leasehold 3-node cluster, raw generator";
            case "cluster-client" -> "Leasehold 3-node cluster, official client";
            case "etcd" -> "etcd 3 members + jetcd Lock";
            default -> target;
        };
    }
}
