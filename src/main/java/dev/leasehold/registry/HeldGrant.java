package dev.leasehold.registry;

import java.util.List;

import dev.leasehold.protocol.HoldMode;

/**
 * A key's holds that another node decided, as {@link LockRegistry#promote} installs them on a new
 * cluster leader: the key, the {@link HoldMode} of its holds, and the holds themselves (one for an
 * exclusive key, one or more for a shared one). Durations only: the registry times them from its
 * own clock.
 *
 * @param key the key
 * @param mode how its holds hold it (all of a key's holds share one mode, PROTOCOL.md 13.2)
 * @param slots its holds: active grants and places kept by a lock-delay; never empty, one when exclusive
 */
public record HeldGrant(byte[] key, HoldMode mode, List<Slot> slots) {

    public HeldGrant {
        slots = List.copyOf(slots);
        if (slots.isEmpty() || (!mode.isShared() && slots.size() != 1)) {
            throw new IllegalArgumentException("a " + mode + " key has " + (mode.isShared() ? "one or more holds" : "one hold")
                    + ", not " + slots.size());
        }
    }

    /** A key held exclusively by {@code token}, whose longest requested lease was {@code maxLeaseSeconds}. */
    public static HeldGrant exclusive(byte[] key, long token, int maxLeaseSeconds) {
        return new HeldGrant(key, HoldMode.EXCLUSIVE, List.of(Slot.active(token, maxLeaseSeconds)));
    }

    /** A key held exclusively by {@code token} with its value (PROTOCOL.md section 17; null: none). */
    public static HeldGrant exclusive(byte[] key, long token, int maxLeaseSeconds, byte[] value) {
        return new HeldGrant(key, HoldMode.EXCLUSIVE, List.of(Slot.active(token, maxLeaseSeconds, value)));
    }

    /** A key in lock-delay for {@code delaySeconds} after the exclusive {@code delayedToken}'s lease ran out (section 12). */
    public static HeldGrant delayed(byte[] key, long delayedToken, int delaySeconds) {
        return new HeldGrant(key, HoldMode.EXCLUSIVE, List.of(Slot.delayed(delayedToken, delaySeconds)));
    }

    /**
     * One hold: the active grant {@code token} (its longest lease {@code maxLeaseSeconds}, its value
     * {@code value}), or, with {@code token} 0, a place kept by the lock-delay after
     * {@code delayedToken}'s lease ran out, for {@code delaySeconds} (PROTOCOL.md sections 12 and 13.5).
     *
     * @param value an active exclusive grant's value (PROTOCOL.md section 17), or null for none
     */
    public record Slot(long token, int maxLeaseSeconds, long delayedToken, int delaySeconds, byte[] value) {

        /** A hold without a value. */
        public Slot(long token, int maxLeaseSeconds, long delayedToken, int delaySeconds) {
            this(token, maxLeaseSeconds, delayedToken, delaySeconds, null);
        }

        /** An active grant. */
        public static Slot active(long token, int maxLeaseSeconds) {
            return new Slot(token, maxLeaseSeconds, 0, 0);
        }

        /** An active exclusive grant with its value (null: none). */
        public static Slot active(long token, int maxLeaseSeconds, byte[] value) {
            return new Slot(token, maxLeaseSeconds, 0, 0, value);
        }

        /** A place in lock-delay after {@code delayedToken}. */
        public static Slot delayed(long delayedToken, int delaySeconds) {
            return new Slot(0, 0, delayedToken, delaySeconds);
        }

        /** An active grant rather than a lock-delay. */
        public boolean isActive() {
            return token != 0;
        }
    }
}
