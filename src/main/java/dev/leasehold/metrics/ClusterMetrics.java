package dev.leasehold.metrics;

import java.util.concurrent.TimeUnit;

import dev.leasehold.cluster.ClusterNode;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Cluster-mode meters (docs/metrics.md): {@code leasehold_raft_role} (0 follower, 1 candidate,
 * 2 leader not yet serving, 3 serving leader, -1 stopped), {@code leasehold_raft_leader_changes_total},
 * {@code leasehold_raft_commit_seconds} (histogram: a batch from proposal to commit and apply on
 * the leader) and {@code leasehold_raft_apply_lag_entries} (committed but not yet applied here).
 */
public final class ClusterMetrics implements MeterBinder {

    private final ClusterNode node;

    /** @param node the cluster node whose Raft state the meters show */
    public ClusterMetrics(ClusterNode node) {
        this.node = node;
    }

    @Override
    public void bindTo(MeterRegistry meters) {
        Gauge.builder("leasehold.raft.role", node, ClusterMetrics::role)
                .description("Raft role: 0 follower, 1 candidate, 2 leader not yet serving, 3 serving leader, -1 stopped, starting or unreadable")
                .register(meters);
        FunctionCounter.builder("leasehold.raft.leader.changes", node, n -> n.status().leaderChanges())
                .description("Leader changes seen by this node").register(meters);
        Gauge.builder("leasehold.raft.apply.lag", node, n -> {
            ClusterNode.Status s = n.status();
            return Math.max(0, s.commitIndex() - s.appliedIndex());
        }).baseUnit("entries").description("Raft entries committed but not yet applied on this node").register(meters);
        Gauge.builder("leasehold.token.high.water", node, ClusterNode::tokenHighWater)
                .description("No fencing token of this cluster known to this node exceeds this; record it to rebuild a cluster above it")
                .register(meters);
        Timer commit = Timer.builder("leasehold.raft.commit").publishPercentileHistogram()
                .description("A batch of decisions from proposal to commit (and apply on the leader)")
                .register(meters);
        node.onCommit(nanos -> commit.record(nanos, TimeUnit.NANOSECONDS));
    }

    private static double role(ClusterNode n) {
        ClusterNode.Status s = n.status();
        return switch (s.role()) {
            case "FOLLOWER", "LISTENER" -> 0;
            case "CANDIDATE" -> 1;
            case "LEADER" -> s.serving() ? 3 : 2;
            default -> -1;
        };
    }
}
