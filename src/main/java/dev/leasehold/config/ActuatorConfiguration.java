package dev.leasehold.config;

import java.time.Instant;
import java.util.List;

import dev.leasehold.admin.ClusterEndpoint;
import dev.leasehold.admin.SnapshotEndpoint;
import dev.leasehold.protocol.TokenFloorSnapshot;
import dev.leasehold.cluster.ClusterNode;
import dev.leasehold.health.ClusterHealthIndicator;
import dev.leasehold.cluster.tls.PeerRefusals;
import dev.leasehold.metrics.ClusterMetrics;
import dev.leasehold.metrics.PeerRefusalMetrics;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;

import dev.leasehold.health.LeaseholdHealthIndicator;
import dev.leasehold.inspect.LocksEndpoint;
import dev.leasehold.health.LeaseholdReadinessHealthIndicator;
import dev.leasehold.metrics.LeaseholdMetrics;
import dev.leasehold.metrics.RegistryEventMetrics;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.ServerStats;
import dev.leasehold.store.LeaseHorizonStore;
import dev.leasehold.store.RecoveryGrace;
import dev.leasehold.store.RecoveryPlan;
import dev.leasehold.store.ReservedTokens;
import dev.leasehold.store.StorageStatus;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Health components ({@code leasehold}, {@code leaseholdReadiness}: names come from the bean
 * names minus "HealthIndicator") and Micrometer meters. Health groups are configured in
 * application.yml.
 */
@Configuration(proxyBeanMethods = false)
public class ActuatorConfiguration {

    /**
     * The registry's observer (see {@code LeaseholdConfiguration#lockRegistry}). Its meters are
     * registered here, when the registry is built, so no event can come before them.
     */
    @Bean
    RegistryEventMetrics registryEventMetrics(MeterRegistry meters) {
        return new RegistryEventMetrics(meters);
    }

    /** The token file's and the horizon's meters exist on a single node only (cluster mode has neither). */
    @Bean
    LeaseholdMetrics leaseholdMetrics(LockRegistry registry, ServerStats stats, ObjectProvider<ReservedTokens> tokens,
            ObjectProvider<LeaseHorizonStore> horizon, ObjectProvider<StorageStatus> storage) {
        return new LeaseholdMetrics(registry, stats, tokens.getIfAvailable(), horizon.getIfAvailable(), storage);
    }

    /** The recovery grace is shown on a single node only: a cluster has none (PROTOCOL.md section 10). */
    @Bean
    LeaseholdHealthIndicator leaseholdHealthIndicator(LeaseholdServer server, LockRegistry registry,
            ServerStats stats, ObjectProvider<StorageStatus> storage, LeaseholdProperties props,
            ObjectProvider<RecoveryPlan> plan) {
        RecoveryPlan p = plan.getIfAvailable();
        if (p == null) {
            return new LeaseholdHealthIndicator(server, registry, stats, storage, null, null);
        }
        RecoveryGrace grace = props.recoveryGrace();
        return new LeaseholdHealthIndicator(server, registry, stats, storage, grace.isOff() ? "off" : grace.toString(),
                p.reason());
    }

    @Bean
    LeaseholdReadinessHealthIndicator leaseholdReadinessHealthIndicator(LeaseholdServer server,
            LockRegistry registry, ServerStats stats, ObjectProvider<ClusterNode> cluster) {
        return new LeaseholdReadinessHealthIndicator(server, registry, stats, cluster.getIfAvailable());
    }

    /**
     * The {@code locks} endpoint, made only when it is exposed (not by default: docs/security.md).
     * In cluster mode it answers on the serving leader only; elsewhere it names the leader.
     */
    @Bean
    @ConditionalOnAvailableEndpoint(LocksEndpoint.class)
    LocksEndpoint locksEndpoint(LockRegistry registry, ObjectProvider<ClusterNode> cluster) {
        ClusterNode node = cluster.getIfAvailable();
        if (node == null) {
            return new LocksEndpoint(registry, () -> LocksEndpoint.Serving.ALWAYS);
        }
        return new LocksEndpoint(registry, () -> {
            String hint = node.leaderHint();
            return new LocksEndpoint.Serving(node.servingEpoch() != 0,
                    hint.startsWith("leader=") ? hint.substring("leader=".length()) : "");
        });
    }

    /**
     * Cluster mode: the {@code cluster} endpoint (members, add, remove, replace), made only when it
     * is exposed (not by default) and answered from loopback only (docs/security.md).
     */
    @Bean
    @ConditionalOnAvailableEndpoint(ClusterEndpoint.class)
    @ConditionalOnClusterMode
    ClusterEndpoint clusterEndpoint(ClusterNode node) {
        return new ClusterEndpoint(node.membership());
    }

    /**
     * The {@code snapshot} endpoint (a token-floor snapshot; in a cluster on the serving leader
     * only), made only when it is exposed and answered from loopback only.
     */
    @Bean
    @ConditionalOnAvailableEndpoint(SnapshotEndpoint.class)
    SnapshotEndpoint snapshotEndpoint(ObjectProvider<ClusterNode> cluster, ObjectProvider<ReservedTokens> tokens) {
        ClusterNode node = cluster.getIfAvailable();
        if (node != null) {
            return new SnapshotEndpoint(() -> node.floorSnapshot(Instant.now()));
        }
        ReservedTokens single = tokens.getObject();
        return new SnapshotEndpoint(() -> new TokenFloorSnapshot("single", "single", Instant.now(), 0, 0,
                single.highWater(), List.of()));
    }

    /** Cluster mode: the {@code cluster} health component. */
    @Bean
    @ConditionalOnClusterMode
    ClusterHealthIndicator clusterHealthIndicator(ClusterNode node) {
        return new ClusterHealthIndicator(node);
    }

    /** Cluster mode: Raft role, leader changes, commit time and apply lag. */
    @Bean
    @ConditionalOnClusterMode
    ClusterMetrics clusterMetrics(ClusterNode node) {
        return new ClusterMetrics(node);
    }

    /** Cluster mode: Raft connections refused by cluster TLS, by reason. */
    @Bean
    @ConditionalOnClusterMode
    PeerRefusalMetrics peerRefusalMetrics(PeerRefusals refusals) {
        return new PeerRefusalMetrics(refusals);
    }
}
