package dev.leasehold.health;

import java.util.List;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

import dev.leasehold.cluster.ClusterNode;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.ServerStats;

/**
 * The {@code leaseholdReadiness} component, meant for the readiness group only: should new
 * sessions be sent here?
 * <ul>
 * <li>OUT_OF_SERVICE while draining (every Acquire gets B; the pod is going away);</li>
 * <li>DOWN when the protocol port is not bound, and in cluster mode once the node knows it was
 * removed from the cluster (it will never serve again);</li>
 * <li>UP otherwise. In particular UP during a recovery grace (queued Acquires are granted when
 * it ends, Release and Extend work) and UP while the data directory fails: Leasehold runs as one
 * replica, so taking it out of the Service would turn definitive B answers and working Releases
 * into connection failures, with nowhere else to go. The {@code leasehold} component and the
 * {@code leasehold_storage_failing} metric report the disk.</li>
 * </ul>
 */
public final class LeaseholdReadinessHealthIndicator implements HealthIndicator {

    private final LeaseholdServer server;
    private final LockRegistry registry;
    private final ServerStats stats;
    private final ClusterNode cluster;

    public LeaseholdReadinessHealthIndicator(LeaseholdServer server, LockRegistry registry, ServerStats stats) {
        this(server, registry, stats, null);
    }

    /**
     * @param cluster in cluster mode, readiness also needs "joined, and a serving leader known" (this
     *        node or another: not "I am leader", or a rolling update would stall); null otherwise
     */
    public LeaseholdReadinessHealthIndicator(LeaseholdServer server, LockRegistry registry, ServerStats stats,
            ClusterNode cluster) {
        this.server = server;
        this.registry = registry;
        this.stats = stats;
        this.cluster = cluster;
    }

    @Override
    public Health health() {
        Health h = health(LeaseholdSnapshot.read(server, registry, stats, List.of()));
        if (cluster != null && h.getStatus().equals(Status.UP)) {
            ClusterNode.Status c = cluster.status();
            if (!c.removed().isEmpty()) {
                return Health.down().withDetails(h.getDetails())
                        .withDetail("cluster", ClusterHealthIndicator.REMOVED + " (" + c.removed() + ")").build();
            }
            if (!c.ready()) {
                return Health.outOfService().withDetails(h.getDetails())
                        .withDetail("cluster", "no serving leader known (role " + c.role() + ")").build();
            }
        }
        return h;
    }

    static Health health(LeaseholdSnapshot s) {
        Health.Builder b;
        if (s.draining()) {
            b = Health.outOfService();
        } else if (!s.bound()) {
            b = Health.down().withDetail("error", "protocol port not bound");
        } else {
            b = Health.up();
        }
        b.withDetail("port", s.port()).withDetail("draining", s.draining());
        if (s.graceRemainingNanos() > 0) {
            b.withDetail("recoveryGraceRemainingMs", s.graceRemainingMillis());
        }
        return b.build();
    }
}
