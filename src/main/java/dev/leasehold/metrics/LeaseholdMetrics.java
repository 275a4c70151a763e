package dev.leasehold.metrics;

import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.server.ServerStats;
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
    private final Iterable<? extends StorageStatus> storage;

    /**
     * @param storage every durable store; iterated at each scrape, so a lazily resolved
     *        collection (such as Spring's {@code ObjectProvider}) sees stores added later
     */
    public LeaseholdMetrics(LockRegistry registry, ServerStats stats, ReservedTokens tokens,
            Iterable<? extends StorageStatus> storage) {
        this.registry = registry;
        this.stats = stats;
        this.tokens = tokens;
        this.storage = storage;
    }

    @Override
    public void bindTo(MeterRegistry meters) {
        Gauge.builder("leasehold.locks.held", registry, LockRegistry::heldKeys)
                .description("Keys with an active grant")
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
        for (ErrorCode code : ErrorCode.values()) {
            FunctionCounter.builder("leasehold.protocol.errors", stats, s -> s.protocolErrors(code))
                    .description("X (error) frames sent, by error code; each closes its session")
                    .baseUnit("errors")
                    .tag("code", Integer.toString(code.code()))
                    .register(meters);
        }
        FunctionCounter.builder("leasehold.token.store.writes", tokens, ReservedTokens::writes)
                .description("fsync'd writes of the fencing-token high-water mark (one at start, then one per half block)")
                .baseUnit("writes")
                .register(meters);
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
