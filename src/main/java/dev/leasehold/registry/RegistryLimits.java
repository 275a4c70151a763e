package dev.leasehold.registry;

/**
 * Capacity limits of the registry (PROTOCOL.md section 7). Passing one gives {@code B}.
 *
 * @param maxWaitersPerKey queued Acquires on one key
 * @param maxWaitersTotal queued Acquires on all keys
 * @param maxPendingPerSession queued Acquires of one session
 * @param maxHeldKeys keys with an active grant
 */
public record RegistryLimits(int maxWaitersPerKey, int maxWaitersTotal, int maxPendingPerSession, int maxHeldKeys) {

    public RegistryLimits {
        if (maxWaitersPerKey < 0 || maxWaitersTotal < 0 || maxPendingPerSession < 0 || maxHeldKeys < 1) {
            // the parameters, not this: in a compact constructor the fields are not assigned yet
            throw new IllegalArgumentException("limits must be >= 0 (held keys >= 1): maxWaitersPerKey="
                    + maxWaitersPerKey + ", maxWaitersTotal=" + maxWaitersTotal + ", maxPendingPerSession="
                    + maxPendingPerSession + ", maxHeldKeys=" + maxHeldKeys);
        }
    }
}
