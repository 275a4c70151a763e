package dev.leasehold.config;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.registry.DecisionLog;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.TokenSource;
import dev.leasehold.server.Outboxes;
import dev.leasehold.store.DataDirectory;
import dev.leasehold.store.DurableFiles;
import dev.leasehold.store.LeaseHorizonStore;
import dev.leasehold.store.PreviousRun;
import dev.leasehold.store.RecoveryGrace;
import dev.leasehold.store.RecoveryPlan;
import dev.leasehold.store.ReservedTokens;
import dev.leasehold.store.TokenFloorRestore;

/**
 * Single-node mode ({@code leasehold.cluster.node-id} not set): tokens from the {@code tokens}
 * file, the lease horizon in {@code lease-horizon}, nothing replicated, every answer written at
 * once, and the recovery grace applied before anything is served (PROTOCOL.md section 8).
 */
@Configuration(proxyBeanMethods = false)
@Conditional(SingleNodeConfiguration.NotCluster.class)
public class SingleNodeConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(SingleNodeConfiguration.class);

    /** Matches when {@code leasehold.cluster.node-id} is not set: the opposite of {@link ClusterConfiguration}. */
    static final class NotCluster extends NoneNestedConditions {

        NotCluster() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnClusterMode
        static final class ClusterNodeId {
        }
    }

    /**
     * Opened after the lease horizon store ({@code horizonFirst}), which must see the data
     * directory as the previous run left it to tell a first start: this writes {@code tokens}.
     */
    @Bean(destroyMethod = "close")
    ReservedTokens reservedTokens(Path leaseholdDataDir, LeaseholdProperties props, ObjectProvider<DurableFiles> files,
            LeaseHorizonStore horizonFirst, TokenFloorRestore.Floor restored) {
        Path file = leaseholdDataDir.resolve("tokens");
        try {
            return ReservedTokens.open(files.getIfAvailable(() -> DurableFiles.REAL).open(file, "tokens"),
                    props.tokenBlockSize(), restored.value());
        } catch (IOException e) {
            throw DataDirectory.openFailure(file, "reserve fencing tokens", e);
        }
    }

    /** Closed after the protocol server has drained (beans are destroyed after lifecycle stop). */
    @Bean(destroyMethod = "close")
    LeaseHorizonStore leaseHorizonStore(Path leaseholdDataDir, LeaseholdProperties props,
            ObjectProvider<DurableFiles> files, TokenFloorRestore.Floor restoredFirst) {
        boolean firstStart = !DataDirectory.holdsState(leaseholdDataDir);
        if (firstStart) {
            // INFO: a first start is the normal case of every new installation; the line stays for
            // the one case it explains (a data directory lost or replaced while leases were held).
            LOG.info("Data directory {} holds no state of a previous run: treating it as new, so no recovery grace"
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
    RecoveryPlan recoveryPlan(LeaseholdProperties props, LeaseHorizonStore horizon) {
        return RecoveryPlan.of(props.recoveryGrace(), horizon.previous());
    }

    @Bean
    NodeMode singleNode(ReservedTokens tokens, LeaseHorizonStore horizon, RecoveryPlan plan) {
        return new SingleNode(tokens, horizon, plan);
    }

    /**
     * Opens single-node mode on {@code dataDir} (prepared) as the beans above do, with the default
     * token block, lookahead and clock slack and real files: for the embedded server of the
     * {@code leasehold-test} artifact, which wires a node without Spring. Close what it returns
     * after the protocol server has stopped.
     */
    public static SingleNode open(Path dataDir, RecoveryGrace grace) {
        boolean firstStart = !DataDirectory.holdsState(dataDir);
        LeaseHorizonStore.Settings defaults = LeaseHorizonStore.Settings.DEFAULTS;
        LeaseHorizonStore store;
        try {
            store = LeaseHorizonStore.open(dataDir, DurableFiles.REAL, defaults, firstStart);
        } catch (IOException e) {
            throw DataDirectory.openFailure(dataDir.resolve("lease-horizon"), "write the lease horizon", e);
        }
        Path file = dataDir.resolve("tokens");
        try {
            ReservedTokens tokens = ReservedTokens.open(DurableFiles.REAL.open(file, "tokens"),
                    ReservedTokens.DEFAULT_BLOCK_SIZE);
            return new SingleNode(tokens, store, RecoveryPlan.of(grace, store.previous()));
        } catch (IOException | RuntimeException e) {
            store.close();
            if (e instanceof RuntimeException r) {
                throw r;
            }
            throw DataDirectory.openFailure(file, "reserve fencing tokens", (IOException) e);
        }
    }

    /** The files' token counter and horizon; the recovery grace held over every key until it ends. */
    public record SingleNode(ReservedTokens reserved, LeaseHorizonStore store, RecoveryPlan plan)
            implements NodeMode, AutoCloseable {

        /** Closes the token file and the horizon store (what the beans' destroy methods do). */
        @Override
        public void close() {
            reserved.close();
            store.close();
        }

        @Override
        public TokenSource tokens() {
            return reserved;
        }

        @Override
        public LeaseHorizon horizon() {
            return store;
        }

        @Override
        public DecisionLog decisions() {
            return DecisionLog.NONE;
        }

        @Override
        public Outboxes outboxes() {
            return Outboxes.direct();
        }

        @Override
        public void prepare(LockRegistry registry) {
            store.heldLeases(registry::latestHeldLeaseEnd); // a graceful stop protects only leases still held
            applyRecoveryGrace(registry, plan, store.previous(), reserved);
        }
    }

    /**
     * Holds every key until the grace ends; counted from when the horizon was read, which is
     * before anything can be served. Logs how long and why.
     */
    static void applyRecoveryGrace(LockRegistry registry, RecoveryPlan plan, PreviousRun previous,
            ReservedTokens tokens) {
        Duration grace = plan.grace();
        if (plan.reason().equals("off")) {
            LOG.warn("Recovery grace is OFF (leasehold.recovery-grace=0s): keys are granted at once, so a lease"
                    + " handed out before this start may still be in use and a key can have two holders");
            return;
        }
        if (grace.isZero()) {
            LOG.info("Recovery grace 0 ms ({}): keys are granted at once ({}); tokens continue above {}",
                    plan.reason(), plan.detail(), tokens.lastIssued());
            return;
        }
        registry.holdAllUntil(previous.readNanos() + grace.toNanos());
        LOG.info("Recovery grace {} ms ({}): no key is granted until leases of the previous run have ended ({});"
                + " tokens continue above {}", grace.toMillis(), plan.reason(), plan.detail(), tokens.lastIssued());
    }
}
