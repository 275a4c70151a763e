package dev.leasehold.config;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.cluster.ClusterNode;
import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.RegistryTimer;
import dev.leasehold.server.ServerSecurity;
import dev.leasehold.server.ServerStats;
import dev.leasehold.server.ServingGate;
import dev.leasehold.server.SessionNotifier;
import dev.leasehold.store.DataDirectory;
import dev.leasehold.store.DurableFiles;
import dev.leasehold.store.LeaseHorizonStore;
import dev.leasehold.store.ReservedTokens;

/**
 * Wires the lock server: data directory, tokens, lease horizon, registry (with the recovery
 * grace applied before anything is served), timer, protocol port.
 */
@Configuration(proxyBeanMethods = false)
public class LeaseholdConfiguration {

    private static final Logger log = LoggerFactory.getLogger(LeaseholdConfiguration.class);

    @Bean
    NanoClock nanoClock() {
        return NanoClock.SYSTEM;
    }

    @Bean
    Path leaseholdDataDir(LeaseholdProperties props) {
        return DataDirectory.prepare(props.dataDir());
    }

    /**
     * Opened after the lease horizon store ({@code horizonFirst}), which must see the data
     * directory as the previous run left it to tell a first start: this writes {@code tokens}.
     */
    @Bean(destroyMethod = "close")
    ReservedTokens reservedTokens(Path leaseholdDataDir, LeaseholdProperties props, ObjectProvider<DurableFiles> files,
            LeaseHorizonStore horizonFirst) {
        Path file = leaseholdDataDir.resolve("tokens");
        try {
            return ReservedTokens.open(files.getIfAvailable(() -> DurableFiles.REAL).open(file, "tokens"),
                    props.tokenBlockSize());
        } catch (IOException e) {
            throw DataDirectory.openFailure(file, "reserve fencing tokens", e);
        }
    }

    /** Closed after the protocol server has drained (beans are destroyed after lifecycle stop). */
    @Bean(destroyMethod = "close")
    LeaseHorizonStore leaseHorizonStore(Path leaseholdDataDir, LeaseholdProperties props,
            ObjectProvider<DurableFiles> files) {
        boolean firstStart = !DataDirectory.holdsState(leaseholdDataDir);
        if (firstStart) {
            log.warn("Data directory {} holds no state of a previous run: treating it as new, so no recovery grace"
                    + " (if it held locks before and was lost or replaced, leases of that run are not waited for)",
                    leaseholdDataDir);
        }
        LeaseHorizonStore.Settings settings = new LeaseHorizonStore.Settings(props.recoveryLookahead(),
                props.recoveryClockSlack(), LeaseHorizonStore.Settings.DEFAULTS.checkPeriod());
        try {
            return LeaseHorizonStore.open(leaseholdDataDir, files.getIfAvailable(() -> DurableFiles.REAL), settings,
                    firstStart);
        } catch (IOException e) {
            throw DataDirectory.openFailure(leaseholdDataDir.resolve("lease-horizon"), "write the lease horizon", e);
        }
    }

    @Bean
    ServerStats serverStats() {
        return new ServerStats();
    }

    /**
     * Cluster mode (leasehold.cluster.node-id set): the Raft node. Its log and snapshots live in
     * {@code <data-dir>/raft}. A log that cannot be written halts the process.
     */
    @Bean
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(prefix = "leasehold.cluster", name = "node-id")
    ClusterNode clusterNode(LeaseholdProperties props, NanoClock clock, Path leaseholdDataDir) {
        LeaseholdProperties.Cluster c = props.cluster();
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        c.peers().forEach((id, p) -> peers.put(id, new ClusterSettings.Peer(p.raftAddress(), p.clientAddress())));
        ClusterSettings settings = new ClusterSettings(c.nodeId(), peers, leaseholdDataDir.resolve("raft"),
                c.electionTimeoutMin(), c.electionTimeoutMax(), c.maxBatch(), c.maxInFlight(), c.maxPending(),
                c.snapshotEvery());
        return new ClusterNode(settings, clock, () -> Runtime.getRuntime().halt(70));
    }

    @Bean
    RecoveryPlan recoveryPlan(LeaseholdProperties props, LeaseHorizonStore horizon) {
        return RecoveryPlan.of(props.recoveryGrace(), horizon.previous());
    }

    @Bean
    LockRegistry lockRegistry(LeaseholdProperties props, NanoClock clock, ReservedTokens tokens,
            LeaseHorizonStore horizon, RecoveryPlan plan, ObjectProvider<RegistryObserver> observer,
            ObjectProvider<ClusterNode> cluster) {
        RegistryLimits limits = new RegistryLimits(props.maxWaitersPerKey(), props.maxWaitersTotal(),
                props.maxPendingPerSession(), props.maxHeldKeys());
        ClusterNode node = cluster.getIfAvailable();
        RegistryObserver events = observer.getIfAvailable(() -> RegistryObserver.NONE);
        if (node != null) {
            // The log holds the exact grants: no recovery grace and no horizon (PROTOCOL.md section 10);
            // tokens come from the replicated counter.
            log.info("Cluster mode: node {} of {}", node.settings().nodeId(), node.settings().peers().keySet());
            return new LockRegistry(limits, clock, node.tokens(), LeaseHorizon.UNBOUNDED,
                    new SessionNotifier(node, clock, events), events, node.decisions());
        }
        LockRegistry registry = new LockRegistry(limits, clock, tokens, horizon,
                new SessionNotifier(ServingGate.SINGLE_NODE, clock, events), events);
        applyRecoveryGrace(registry, plan, horizon.previous(), tokens);
        return registry;
    }

    /**
     * Holds every key until the grace ends; counted from when the horizon was read, which is
     * before anything can be served. Logs how long and why.
     */
    static void applyRecoveryGrace(LockRegistry registry, RecoveryPlan plan, LeaseHorizonStore.Previous previous,
            ReservedTokens tokens) {
        Duration grace = plan.grace();
        if (plan.reason().equals("off")) {
            log.warn("Recovery grace is OFF (leasehold.recovery-grace=0s): keys are granted at once, so a lease"
                    + " handed out before this start may still be in use and a key can have two holders");
            return;
        }
        if (grace.isZero()) {
            log.info("Recovery grace 0 ms ({}): keys are granted at once ({}); tokens continue above {}",
                    plan.reason(), plan.detail(), tokens.lastIssued());
            return;
        }
        registry.holdAllUntil(previous.readNanos() + grace.toNanos());
        log.info("Recovery grace {} ms ({}): no key is granted until leases of the previous run have ended ({});"
                + " tokens continue above {}", grace.toMillis(), plan.reason(), plan.detail(), tokens.lastIssued());
    }

    @Bean
    RegistryTimer registryTimer(LockRegistry registry) {
        return new RegistryTimer(registry);
    }

    @Bean
    LeaseholdServer leaseholdServer(LeaseholdProperties props, LockRegistry registry, NanoClock clock,
            ServerStats stats, ServerSecurity security, ObjectProvider<ClusterNode> cluster) {
        ConnectionBudget budget = ConnectionBudget.forThisProcess(props.maxConnections());
        if (budget.lowered() && props.maxConnections() != LeaseholdProperties.DEFAULT_MAX_CONNECTIONS) {
            // Only a value someone chose is worth a WARN: the default is lowered on most machines
            // (20,000 is a common open-file limit), and a WARN on every first start alarms new users.
            log.warn("{}. Raise the open-file limit (ulimit -n; LimitNOFILE in systemd; see README) to serve"
                    + " more sessions", budget.describe());
        } else {
            log.info("{}", budget.describe());
        }
        ClusterNode node = cluster.getIfAvailable();
        LeaseholdServer server = new LeaseholdServer(new LeaseholdServer.Settings(props.address(), props.port(),
                props.maxKeyBytes(), props.frameTimeout(), budget.effective(), props.effectiveIoThreads(),
                props.drainTimeout(), props.listenBacklog()), registry, clock, stats, security,
                node != null ? node : ServingGate.SINGLE_NODE);
        if (node != null) {
            node.attach(registry, server);
        }
        return server;
    }
}
