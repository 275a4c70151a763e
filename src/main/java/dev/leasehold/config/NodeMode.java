package dev.leasehold.config;

import dev.leasehold.registry.DecisionLog;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.registry.TokenSource;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.Outboxes;
import dev.leasehold.server.ServerSecurity;
import dev.leasehold.server.ServerStats;
import dev.leasehold.server.SessionNotifier;

/**
 * What one mode supplies to the wiring that both modes share: a single node
 * ({@link SingleNodeConfiguration}) or a node of a cluster ({@link ClusterConfiguration}), chosen
 * once by {@code leasehold.cluster.node-id}. The registry and the protocol server are then built
 * the same way for both, by {@link #registry} and {@link #server}: the Spring wiring and the
 * in-process test cluster call these, so the two cannot drift apart.
 */
public interface NodeMode {

    /** Where fencing tokens come from: the token file, or the replicated counter. */
    TokenSource tokens();

    /** The stored lease horizon, or {@link LeaseHorizon#UNBOUNDED} where the log holds the grants. */
    LeaseHorizon horizon();

    /** Receives every state-changing decision: {@link DecisionLog#NONE}, or the Raft proposer. */
    DecisionLog decisions();

    /** How sessions are served and answered: at once, or commit-gated while leading. */
    Outboxes outboxes();

    /** Runs on the new registry, before anything can be served (single node: the recovery grace). */
    default void prepare(LockRegistry registry) {
    }

    /** Runs once the registry and the protocol server exist (cluster: the node attaches to both). */
    default void attach(LockRegistry registry, LeaseholdServer server) {
    }

    /** The registry of a node in {@code mode}, prepared. */
    static LockRegistry registry(NodeMode mode, RegistryLimits limits, NanoClock clock, RegistryObserver observer) {
        LockRegistry registry = new LockRegistry(limits, clock, mode.tokens(), mode.horizon(),
                new SessionNotifier(clock, observer), observer, mode.decisions());
        mode.prepare(registry);
        return registry;
    }

    /** The protocol server of a node in {@code mode}, attached; not started. */
    static LeaseholdServer server(NodeMode mode, LeaseholdServer.Settings settings, LockRegistry registry,
            NanoClock clock, ServerStats stats, ServerSecurity security) {
        LeaseholdServer server = new LeaseholdServer(settings, registry, clock, stats, security, mode.outboxes());
        mode.attach(registry, server);
        return server;
    }
}
