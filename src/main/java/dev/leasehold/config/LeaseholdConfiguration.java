package dev.leasehold.config;

import java.nio.file.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.server.ConnectionBudget;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.RegistryTimer;
import dev.leasehold.server.ServerSecurity;
import dev.leasehold.server.ServerStats;
import dev.leasehold.store.DataDirectory;
import dev.leasehold.store.TokenFloorRestore;

/**
 * Wires what both modes share: data directory, registry, timer, protocol port. What differs
 * between a single node and a cluster node (tokens, lease horizon, decision log, how answers
 * leave) comes from the one {@link NodeMode} bean, supplied by {@link SingleNodeConfiguration}
 * or {@link ClusterConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
public class LeaseholdConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseholdConfiguration.class);

    @Bean
    NanoClock nanoClock() {
        return NanoClock.SYSTEM;
    }

    @Bean
    Path leaseholdDataDir(LeaseholdProperties props) {
        return DataDirectory.prepare(props.dataDir());
    }

    /**
     * {@code leasehold.restore-from}, applied before anything else touches the data directory
     * (the stores of either mode depend on this bean), and the restored floor in force there.
     */
    @Bean
    TokenFloorRestore.Floor restoredTokenFloor(Path leaseholdDataDir, LeaseholdProperties props) {
        return new TokenFloorRestore.Floor(TokenFloorRestore.apply(leaseholdDataDir,
                props.restoreFrom() == null ? null : Path.of(props.restoreFrom()),
                props.tokenBlockSize()));
    }

    @Bean
    ServerStats serverStats() {
        return new ServerStats();
    }

    @Bean
    LockRegistry lockRegistry(NodeMode mode, LeaseholdProperties props, NanoClock clock,
            ObjectProvider<RegistryObserver> observer) {
        RegistryLimits limits = new RegistryLimits(props.maxWaitersPerKey(), props.maxWaitersTotal(),
                props.maxPendingPerSession(), props.maxHeldKeys(), props.lockDelay().toNanos(),
                props.maxSharedHoldersPerKey(), props.maxSharedTotal());
        return NodeMode.registry(mode, limits, clock, observer.getIfAvailable(() -> RegistryObserver.NONE));
    }

    @Bean
    RegistryTimer registryTimer(LockRegistry registry) {
        return new RegistryTimer(registry);
    }

    @Bean
    LeaseholdServer leaseholdServer(NodeMode mode, LeaseholdProperties props, LockRegistry registry, NanoClock clock,
            ServerStats stats, ServerSecurity security) {
        ConnectionBudget budget = ConnectionBudget.forThisProcess(props.maxConnections());
        if (budget.lowered() && props.maxConnections() != LeaseholdServer.Settings.DEFAULT_MAX_CONNECTIONS) {
            // Only a value someone chose is worth a WARN: the default is lowered on most machines
            // (20,000 is a common open-file limit), and a WARN on every first start alarms new users.
            LOG.warn("{}. Raise the open-file limit (ulimit -n; LimitNOFILE in systemd; see README) to serve"
                    + " more sessions", budget.describe());
        } else {
            LOG.info("{}", budget.describe());
        }
        LeaseholdServer.Settings settings = new LeaseholdServer.Settings(props.address(), props.port(),
                props.maxKeyBytes(), props.frameTimeout(), budget.effective(), props.effectiveIoThreads(),
                props.drainTimeout(), props.listenBacklog(), props.maxWait(), props.maxValueBytes(),
                props.maxWatchesPerSession(), props.maxWatchesTotal());
        return NodeMode.server(mode, settings, registry, clock, stats, security);
    }
}
