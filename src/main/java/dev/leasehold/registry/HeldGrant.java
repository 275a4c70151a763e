package dev.leasehold.registry;

import java.util.List;

/**
 * A key's grants that another node decided, as {@link LockRegistry#promote} installs them on a new
 * cluster leader. Exclusive: {@code key} held by {@code token}, whose longest requested lease was
 * {@code maxLeaseSeconds}; or, with {@code token} 0, a key in lock-delay after the expiry of
 * {@code delayedToken}, for {@code delaySeconds} (PROTOCOL.md section 12). Shared (section 13):
 * {@code token} and {@code delayedToken} 0, the key's {@code sharedLimit} and its {@code shared}
 * slots. Durations only: the registry times them from its own clock.
 *
 * @param sharedLimit the key's shared limit (0 = read lock, N = semaphore), or {@link #NO_LIMIT}
 *        when the key has no shared slot
 * @param shared the key's shared slots, empty for an exclusive key
 */
public record HeldGrant(byte[] key, long token, int maxLeaseSeconds, long delayedToken, int delaySeconds,
        int sharedLimit, List<Slot> shared) {

    /** {@link #sharedLimit} of a key without shared slots. */
    public static final int NO_LIMIT = -1;

    public HeldGrant {
        shared = List.copyOf(shared);
    }

    /** An exclusive grant, or an exclusive lock-delay ({@code token} 0). */
    public HeldGrant(byte[] key, long token, int maxLeaseSeconds, long delayedToken, int delaySeconds) {
        this(key, token, maxLeaseSeconds, delayedToken, delaySeconds, NO_LIMIT, List.of());
    }

    /** A held key (no lock-delay). */
    public HeldGrant(byte[] key, long token, int maxLeaseSeconds) {
        this(key, token, maxLeaseSeconds, 0, 0);
    }

    /** A key held shared under {@code limit}, by {@code slots}. */
    public static HeldGrant shared(byte[] key, int limit, List<Slot> slots) {
        return new HeldGrant(key, 0, 0, 0, 0, limit, slots);
    }

    /**
     * One shared slot: the active grant {@code token} (its longest lease {@code maxLeaseSeconds}),
     * or, with {@code token} 0, a slot held by the lock-delay after {@code delayedToken}'s lease ran
     * out, for {@code delaySeconds} (PROTOCOL.md 13.5).
     */
    public record Slot(long token, int maxLeaseSeconds, long delayedToken, int delaySeconds) {

        /** An active shared grant. */
        public static Slot active(long token, int maxLeaseSeconds) {
            return new Slot(token, maxLeaseSeconds, 0, 0);
        }

        /** A slot in lock-delay after {@code delayedToken}. */
        public static Slot delayed(long delayedToken, int delaySeconds) {
            return new Slot(0, 0, delayedToken, delaySeconds);
        }
    }
}
