package dev.leasehold.metrics;

import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.server.ServerStats;
import dev.leasehold.store.LeaseHorizonStore;
import dev.leasehold.store.ReservedTokens;
import dev.leasehold.store.StorageStatus;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The server's state, read when Prometheus scrapes: held keys, queue depth, the longest queue,
 * open sessions, protocol errors sent, token-store writes and failing stores. These read
 * counters the server keeps anyway, so they cost nothing per request. Acquire outcomes and
 * timings come from {@link RegistryEventMetrics}.
 */
public final class LeaseholdMetrics implements MeterBinder {

    private final LockRegistry registry;
    private final ServerStats stats;
    private final ReservedTokens tokens;
    private final LeaseHorizonStore horizon;
    private final Iterable<? extends StorageStatus> storage;

    /**
     * @param tokens the token file, or null where there is none (cluster mode): its meter is not registered
     * @param horizon the lease horizon store, or null where there is none (cluster mode)
     * @param storage every durable store; iterated at each scrape, so a lazily resolved
     *        collection (such as Spring's {@code ObjectProvider}) sees stores added later
     */
    public LeaseholdMetrics(LockRegistry registry, ServerStats stats, ReservedTokens tokens, LeaseHorizonStore horizon,
            Iterable<? extends StorageStatus> storage) {
        this.registry = registry;
        this.stats = stats;
        this.tokens = tokens;
        this.horizon = horizon;
        this.storage = storage;
    }

    @Override
    public void bindTo(MeterRegistry meters) {
        Gauge.builder("leasehold.locks.held", registry, LockRegistry::heldKeys)
                .description("Keys with an active grant")
                .register(meters);
        Gauge.builder("leasehold.locks.delayed", registry, LockRegistry::delayedKeys)
                .description("Keys in lock-delay: their lease expired less than leasehold.lock-delay ago, granted to nobody")
                .register(meters);
        Gauge.builder("leasehold.shared.held", registry, LockRegistry::sharedHeld)
                .description("Active shared grants (read locks and semaphore permits), all keys together")
                .register(meters);
        Gauge.builder("leasehold.shared.total", registry, LockRegistry::sharedTotal)
                .description("Shared slots (active or in lock-delay) plus queued S, bounded by leasehold.max-shared-total")
                .register(meters);
        Gauge.builder("leasehold.waiters", registry, LockRegistry::waiters)
                .description("Acquires waiting in a queue, all keys together (queue depth)")
                .baseUnit("waiters")
                .register(meters);
        Gauge.builder("leasehold.waiters.max.per.key", registry, LeaseholdMetrics::longestQueue)
                .description("Waiters in the longest queue of any key right now")
                .register(meters);
        Gauge.builder("leasehold.sessions", stats, ServerStats::sessions)
                .description("Open protocol sessions")
                .baseUnit("sessions")
                .register(meters);
        Gauge.builder("leasehold.watches", stats, ServerStats::openWatches)
                .description("Open watches (O, PROTOCOL.md section 16) over all sessions")
                .register(meters);
        FunctionCounter.builder("leasehold.watch.events", stats, ServerStats::eventsSent)
                .description("Watch events written to sessions")
                .register(meters);
        FunctionCounter.builder("leasehold.watch.events.coalesced", stats, ServerStats::eventsCoalesced)
                .description("Watch events folded into a later one before they were written (a slow observer)")
                .register(meters);
        for (ErrorCode code : ErrorCode.values()) {
            FunctionCounter.builder("leasehold.protocol.errors", stats, s -> s.protocolErrors(code))
                    .description("X (error) frames sent, by error code; each closes its session")
                    .baseUnit("errors")
                    .tag("code", Integer.toString(code.code()))
                    .register(meters);
        }
        if (tokens != null) {
            FunctionCounter.builder("leasehold.token.store.writes", tokens, ReservedTokens::writes)
                    .description("fsync'd writes of the fencing-token high-water mark (one at start, then one per half block)")
                    .baseUnit("writes")
                    .register(meters);
            Gauge.builder("leasehold.token.high.water", tokens, ReservedTokens::highWater)
                    .description("No fencing token issued exceeds this (fsync'd); record it to start a cluster above it")
                    .register(meters);
        }
        Gauge.builder("leasehold.recovery.grace.remaining", registry, r -> r.graceRemainingNanos() / 1e9)
                .description("Recovery grace left after this start (no key is granted until it ends); 0 when none")
                .baseUnit("seconds")
                .register(meters);
        if (horizon != null) {
            FunctionCounter.builder("leasehold.lease.horizon.writes", horizon, LeaseHorizonStore::writes)
                    .description("fsync'd writes of the lease horizon (at start, then as the leases in use need them)")
                    .baseUnit("writes")
                    .register(meters);
            FunctionCounter.builder("leasehold.lease.horizon.waits", horizon, LeaseHorizonStore::deferredAnswers)
                    .description("A or E answers that waited for a lease horizon write (a lease longer than any in use)")
                    .register(meters);
        }
        Gauge.builder("leasehold.storage.failing", this, LeaseholdMetrics::failingStores)
                .description("Durable stores whose last write failed (0 when the data directory is healthy)")
                .register(meters);
    }

    /** Skips the walk over every key when nothing waits, the usual case. */
    private static double longestQueue(LockRegistry registry) {
        return registry.waiters() == 0 ? 0 : registry.longestQueue();
    }

    private double failingStores() {
        int failing = 0;
        for (StorageStatus s : storage) {
            if (s.problem().isPresent()) {
                failing++;
            }
        }
        return failing;
    }
}
