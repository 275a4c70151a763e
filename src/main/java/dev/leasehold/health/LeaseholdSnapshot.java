package dev.leasehold.health;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.leasehold.registry.LockRegistry;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.ServerStats;
import dev.leasehold.store.StorageStatus;

/**
 * What health reports, read once per health request so that status and details agree.
 *
 * @param bound whether the protocol port is bound and accepting sessions
 * @param port the bound protocol port, -1 when not bound
 * @param graceRemainingNanos recovery grace left after a restart, 0 when none
 * @param storageProblems one line per durable store whose last write failed
 */
record LeaseholdSnapshot(boolean bound, int port, int sessions, int heldKeys, int waiters,
        long graceRemainingNanos, boolean draining, List<String> storageProblems) {

    static LeaseholdSnapshot read(LeaseholdServer server, LockRegistry registry, ServerStats stats,
            Iterable<? extends StorageStatus> storage) {
        int port = server.port();
        List<String> problems = new ArrayList<>(0);
        for (StorageStatus s : storage) {
            Optional<String> problem = s.problem();
            problem.ifPresent(problems::add);
        }
        return new LeaseholdSnapshot(server.isRunning() && port > 0, port, stats.sessions(), registry.heldKeys(),
                registry.waiters(), registry.graceRemainingNanos(), registry.isDraining(), List.copyOf(problems));
    }

    /** Remaining recovery grace in milliseconds, rounded up so an active grace never shows 0. */
    long graceRemainingMillis() {
        return (graceRemainingNanos + 999_999) / 1_000_000;
    }
}
