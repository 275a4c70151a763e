package dev.leasehold.health;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import dev.leasehold.cluster.ClusterNode;
import dev.leasehold.cluster.Formation;

/**
 * The {@code cluster} component of {@code /actuator/health} in cluster mode (docs/cluster.md):
 * this node's Raft role and term, the leader, the commit and applied index, and whether this node
 * serves locks. UP while the node runs and knows a leader; OUT_OF_SERVICE while no leader is known
 * (an election, or no majority, or empty storage still waiting for the formation probe) and while
 * the Raft division starts (role {@code STARTING}, before its first role); DOWN
 * when the Raft server is not running, when the node refuses to join because its storage was lost
 * ({@code storage: REFUSED}, docs/cluster.md "When a disk is lost"), and for good once the node
 * knows it was removed from the cluster (detail {@code reason}).
 */
public final class ClusterHealthIndicator implements HealthIndicator {

    /** The reason DOWN gives on a node removed from the cluster (readiness gives the same). */
    public static final String REMOVED = "removed from the cluster: not a member; stop this node and delete its "
            + "data directory";

    private final ClusterNode node;

    /** @param node the cluster node to report on */
    public ClusterHealthIndicator(ClusterNode node) {
        this.node = node;
    }

    @Override
    public Health health() {
        return health(node.status());
    }

    static Health health(ClusterNode.Status s) {
        Health.Builder b;
        if (!s.removed().isEmpty()) {
            b = Health.down().withDetail("reason", REMOVED + " (" + s.removed() + ")");
        } else if (s.storage() == Formation.Storage.REFUSED || "STOPPED".equals(s.role())) {
            b = Health.down();
        } else if (s.notYetRunning() != null) {
            b = Health.outOfService().withDetail("reason", s.notYetRunning());
        } else if (s.leader().isEmpty()) {
            b = Health.outOfService();
        } else {
            b = Health.up();
        }
        return b.withDetail("nodeId", s.nodeId())
                .withDetail("storage", s.storage().name())
                .withDetail("role", s.role())
                .withDetail("serving", s.serving())
                .withDetail("term", s.term())
                .withDetail("leader", s.leader())
                .withDetail("commitIndex", s.commitIndex())
                .withDetail("appliedIndex", s.appliedIndex())
                .withDetail("leaderChanges", s.leaderChanges())
                .withDetail("replicatedHeldKeys", s.replicatedHeldKeys())
                .build();
    }
}
