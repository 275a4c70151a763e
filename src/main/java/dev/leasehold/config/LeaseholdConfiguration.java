package dev.leasehold.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.RegistryTimer;
import dev.leasehold.server.ServerSecurity;
import dev.leasehold.server.ServerStats;
import dev.leasehold.server.SessionNotifier;
import dev.leasehold.store.DataDirectory;
import dev.leasehold.store.ReservedTokens;

/** Wires the lock server: data directory, tokens, registry, timer, protocol port. */
@Configuration(proxyBeanMethods = false)
public class LeaseholdConfiguration {

    @Bean
    NanoClock nanoClock() {
        return NanoClock.SYSTEM;
    }

    @Bean
    Path leaseholdDataDir(LeaseholdProperties props) {
        return DataDirectory.prepare(props.dataDir());
    }

    @Bean(destroyMethod = "close")
    ReservedTokens reservedTokens(Path leaseholdDataDir, LeaseholdProperties props) {
        try {
            return ReservedTokens.open(leaseholdDataDir, props.tokenBlockSize());
        } catch (IOException e) {
            throw new UncheckedIOException("leasehold.data-dir: cannot reserve fencing tokens: " + e.getMessage(), e);
        }
    }

    @Bean
    ServerStats serverStats() {
        return new ServerStats();
    }

    @Bean
    LockRegistry lockRegistry(LeaseholdProperties props, NanoClock clock, ReservedTokens tokens,
            org.springframework.beans.factory.ObjectProvider<RegistryObserver> observer) {
        RegistryLimits limits = new RegistryLimits(props.maxWaitersPerKey(), props.maxWaitersTotal(),
                props.maxPendingPerSession(), props.maxHeldKeys());
        return new LockRegistry(limits, clock, tokens, LeaseHorizon.UNBOUNDED, new SessionNotifier(),
                observer.getIfAvailable(() -> RegistryObserver.NONE));
    }

    @Bean
    RegistryTimer registryTimer(LockRegistry registry) {
        return new RegistryTimer(registry);
    }

    @Bean
    LeaseholdServer leaseholdServer(LeaseholdProperties props, LockRegistry registry, NanoClock clock,
            ServerStats stats, ServerSecurity security) {
        return new LeaseholdServer(new LeaseholdServer.Settings("0.0.0.0", props.port(), props.maxKeyBytes(),
                props.frameTimeout(), props.maxConnections(), props.effectiveIoThreads()), registry, clock, stats,
                security);
    }
}
