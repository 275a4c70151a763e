package dev.leasehold.health;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import dev.leasehold.registry.LockRegistry;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.ServerStats;
import dev.leasehold.store.StorageStatus;

/**
 * The {@code leasehold} component of {@code /actuator/health}: the whole picture, for people and
 * dashboards.
 * <ul>
 * <li>DOWN when the protocol port is not bound, or when any durable store cannot be written
 * (each problem is listed under {@code storageProblems}; meanwhile Acquires that need a new
 * fencing token get B, and the store retries by itself);</li>
 * <li>OUT_OF_SERVICE while draining for shutdown;</li>
 * <li>UP otherwise, including during a recovery grace (shown as
 * {@code recoveryGraceRemainingMs}, with {@code recoveryGraceReason}: first start, crash horizon,
 * graceful stop, missing horizon, configured or off).</li>
 * </ul>
 * Kubernetes probes use the liveness and readiness groups instead (see application.yml): a
 * failing disk must not restart the pod, which would only add a recovery grace.
 */
public final class LeaseholdHealthIndicator implements HealthIndicator {

    private final LeaseholdServer server;
    private final LockRegistry registry;
    private final ServerStats stats;
    private final Iterable<? extends StorageStatus> storage;
    private final String recoveryGraceSetting;
    private final String recoveryGraceReason;

    /**
     * @param storage every durable store; iterated at each health request, so a lazily
     *        resolved collection (such as Spring's {@code ObjectProvider}) sees all of them
     * @param recoveryGraceSetting {@code leasehold.recovery-grace} as configured ("auto", "off",
     *        or a duration): shown so that a server running without the grace is visible
     * @param recoveryGraceReason why this start's grace is what it is ("first start", "crash
     *        horizon", "graceful stop", "missing horizon", "configured", "off")
     */
    public LeaseholdHealthIndicator(LeaseholdServer server, LockRegistry registry, ServerStats stats,
            Iterable<? extends StorageStatus> storage, String recoveryGraceSetting, String recoveryGraceReason) {
        this.server = server;
        this.registry = registry;
        this.stats = stats;
        this.storage = storage;
        this.recoveryGraceSetting = recoveryGraceSetting;
        this.recoveryGraceReason = recoveryGraceReason;
    }

    @Override
    public Health health() {
        return health(LeaseholdSnapshot.read(server, registry, stats, storage), recoveryGraceSetting,
                recoveryGraceReason);
    }

    static Health health(LeaseholdSnapshot s) {
        return health(s, null, null);
    }

    static Health health(LeaseholdSnapshot s, String recoveryGraceSetting, String recoveryGraceReason) {
        Health.Builder b;
        if (!s.bound()) {
            b = Health.down().withDetail("error", "protocol port not bound");
        } else if (!s.storageProblems().isEmpty()) {
            b = Health.down();
        } else if (s.draining()) {
            b = Health.outOfService();
        } else {
            b = Health.up();
        }
        b.withDetail("port", s.port())
                .withDetail("sessions", s.sessions())
                .withDetail("heldKeys", s.heldKeys())
                .withDetail("waiters", s.waiters())
                .withDetail("draining", s.draining());
        if (recoveryGraceSetting != null) {
            b.withDetail("recoveryGrace", recoveryGraceSetting);
        }
        if (recoveryGraceReason != null) {
            b.withDetail("recoveryGraceReason", recoveryGraceReason);
        }
        if (s.graceRemainingNanos() > 0) {
            b.withDetail("recoveryGraceRemainingMs", s.graceRemainingMillis());
        }
        if (!s.storageProblems().isEmpty()) {
            b.withDetail("storageProblems", s.storageProblems());
        }
        return b.build();
    }
}
