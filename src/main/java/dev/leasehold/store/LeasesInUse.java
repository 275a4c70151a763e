package dev.leasehold.store;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which lease lengths are in use: per length in whole seconds (1..255), the monotonic instant a
 * lease of that length was last granted or extended. The lease horizon is written only as far
 * ahead as they need: its <em>reach</em> is the longest length used within
 * {@link LeaseHorizonStore#LEASE_WINDOW} ({@link LeaseHorizonStore}, "Following the leases in use").
 *
 * <p>Lock-free: event loops note each lease they approve ({@link #note}), the store thread reads
 * the reach. A length's instant is refreshed at most once a second, so under load the approving
 * threads seldom write the same slot.
 */
final class LeasesInUse {

    private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long NEVER = Long.MIN_VALUE;

    /** Per lease length in whole seconds (1..255): monotonic time it was last approved, or NEVER. */
    private final AtomicLongArray lastUsed = new AtomicLongArray(256);

    LeasesInUse() {
        for (int i = 0; i < lastUsed.length(); i++) {
            lastUsed.set(i, NEVER);
        }
    }

    /** Remembers that a lease of this length is in use (at most one shared write per length per second). */
    void note(long nowNanos, long leaseEndNanos) {
        long len = leaseEndNanos - nowNanos;
        int seconds = (int) Math.min(255, Math.max(1, (len + SECOND_NANOS - 1) / SECOND_NANOS));
        long last = lastUsed.get(seconds);
        if (last == NEVER || nowNanos - last > SECOND_NANOS) {
            lastUsed.set(seconds, nowNanos);
        }
    }

    /** The longest lease granted or extended within {@link LeaseHorizonStore#LEASE_WINDOW}, 0 if none. */
    long reachNanos(long nowNanos) {
        long window = LeaseHorizonStore.LEASE_WINDOW.toNanos();
        for (int seconds = 255; seconds >= 1; seconds--) {
            long last = lastUsed.get(seconds);
            if (last != NEVER && nowNanos - last < window) {
                return seconds * SECOND_NANOS;
            }
        }
        return 0;
    }

    /** True if any lease was granted or extended in the last {@code period} nanoseconds. */
    boolean activeWithin(long nowNanos, long period) {
        for (int seconds = 1; seconds <= 255; seconds++) {
            long last = lastUsed.get(seconds);
            if (last != NEVER && nowNanos - last < period) {
                return true;
            }
        }
        return false;
    }
}
