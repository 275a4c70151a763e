package dev.leasehold.registry;

/**
 * Capacity limits of the registry (PROTOCOL.md section 7). Passing one gives {@code B}.
 *
 * @param maxWaitersPerKey queued Acquires on one key
 * @param maxWaitersTotal queued Acquires on all keys
 * @param maxPendingPerSession queued Acquires of one session
 * @param maxHeldKeys keys with an active grant (a key in lock-delay keeps its slot)
 * @param lockDelayNanos after a lease <em>expires</em>, the key is granted to nobody for this long
 *        (PROTOCOL.md section 12); 0 = off. Whole seconds, at most 60 s.
 * @param maxSharedPerKey the largest shared limit, and the slots of a read lock (limit 0)
 *        (PROTOCOL.md section 13.6); 1..65535
 * @param maxSharedTotal shared slots plus shared waiters over all keys; an {@code S} past it gets {@code B}
 */
public record RegistryLimits(int maxWaitersPerKey, int maxWaitersTotal, int maxPendingPerSession, int maxHeldKeys,
        long lockDelayNanos, int maxSharedPerKey, int maxSharedTotal) {

    /** Default of {@code leasehold.max-waiters-per-key}. */
    public static final int DEFAULT_MAX_WAITERS_PER_KEY = 1024;
    /** Default of {@code leasehold.max-waiters-total}. */
    public static final int DEFAULT_MAX_WAITERS_TOTAL = 100_000;
    /** Default of {@code leasehold.max-pending-per-session}. */
    public static final int DEFAULT_MAX_PENDING_PER_SESSION = 1024;
    /** Default of {@code leasehold.max-held-keys}. */
    public static final int DEFAULT_MAX_HELD_KEYS = 1_000_000;
    /** Default of {@code leasehold.lock-delay}, in seconds: off. */
    public static final int DEFAULT_LOCK_DELAY_SECONDS = 0;
    /** Default of {@code leasehold.max-shared-holders-per-key}. */
    public static final int DEFAULT_MAX_SHARED_PER_KEY = 1024;
    /** Default of {@code leasehold.max-shared-total}. */
    public static final int DEFAULT_MAX_SHARED_TOTAL = 1_000_000;
    /** The largest shared limit the wire can carry (u16). */
    public static final int MAX_SHARED_LIMIT = 65535;

    /**
     * The server's default limits, what {@code LeaseholdProperties} binds when no {@code leasehold.*}
     * limit is set; its {@code @DefaultValue}s are these constants, so an embedded or test node
     * built from this cannot drift from a configured server.
     */
    public static RegistryLimits defaults() {
        return new RegistryLimits(DEFAULT_MAX_WAITERS_PER_KEY, DEFAULT_MAX_WAITERS_TOTAL, DEFAULT_MAX_PENDING_PER_SESSION,
                DEFAULT_MAX_HELD_KEYS, DEFAULT_LOCK_DELAY_SECONDS * 1_000_000_000L, DEFAULT_MAX_SHARED_PER_KEY,
                DEFAULT_MAX_SHARED_TOTAL);
    }

    /** Limits with the default shared capacities. */
    public RegistryLimits(int maxWaitersPerKey, int maxWaitersTotal, int maxPendingPerSession, int maxHeldKeys,
            long lockDelayNanos) {
        this(maxWaitersPerKey, maxWaitersTotal, maxPendingPerSession, maxHeldKeys, lockDelayNanos,
                DEFAULT_MAX_SHARED_PER_KEY, DEFAULT_MAX_SHARED_TOTAL);
    }

    /** The largest lock-delay: 60 s. */
    public static final long MAX_LOCK_DELAY_NANOS = 60_000_000_000L;

    /** Limits without lock-delay. */
    public RegistryLimits(int maxWaitersPerKey, int maxWaitersTotal, int maxPendingPerSession, int maxHeldKeys) {
        this(maxWaitersPerKey, maxWaitersTotal, maxPendingPerSession, maxHeldKeys, 0);
    }

    public RegistryLimits {
        if (maxWaitersPerKey < 0 || maxWaitersTotal < 0 || maxPendingPerSession < 0 || maxHeldKeys < 1) {
            // the parameters, not this: in a compact constructor the fields are not assigned yet
            throw new IllegalArgumentException("limits must be >= 0 (held keys >= 1): maxWaitersPerKey="
                    + maxWaitersPerKey + ", maxWaitersTotal=" + maxWaitersTotal + ", maxPendingPerSession="
                    + maxPendingPerSession + ", maxHeldKeys=" + maxHeldKeys);
        }
        if (lockDelayNanos < 0 || lockDelayNanos > MAX_LOCK_DELAY_NANOS || lockDelayNanos % 1_000_000_000L != 0) {
            // whole seconds: the cluster's expiry entry carries the delay in its one-byte duration field
            throw new IllegalArgumentException("lock-delay must be whole seconds from 0 to 60 s, not "
                    + lockDelayNanos + " ns");
        }
        if (maxSharedPerKey < 1 || maxSharedPerKey > MAX_SHARED_LIMIT || maxSharedTotal < 0) {
            throw new IllegalArgumentException("maxSharedPerKey must be 1..65535 and maxSharedTotal >= 0: "
                    + maxSharedPerKey + ", " + maxSharedTotal);
        }
    }
}
