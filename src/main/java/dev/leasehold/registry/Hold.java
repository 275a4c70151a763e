package dev.leasehold.registry;

import java.util.Arrays;

import dev.leasehold.protocol.HoldMode;

/**
 * One grant's hold on its key, in any {@link HoldMode}: an active grant (its token, holder, lease
 * end and longest lease), or, after its lease ran out with lock-delay on (PROTOCOL.md section 12),
 * the delay that keeps its place until {@link #delayEndNanos}. The transitions of a single hold
 * live here, once for every mode; which holds a key admits is {@link KeyState}'s rule.
 *
 * <p>Two kinds extend it. A {@link KeyState} is its key's exclusive hold, inline, so that an
 * exclusive grant allocates nothing beyond its key; a {@link SharedSlot} is one of a key's shared
 * holds (section 13). A hold is linked into its lane's timer wheel at its next event (the lease
 * end, then the delay end). Guarded by the lock of its lane.
 */
abstract class Hold extends TimerNode {

    /** The active grant's token; 0 when none (never granted, released, or in lock-delay). */
    long token;
    /** The session that took the active grant, for inspect. */
    SessionHandle.Peer holder = SessionHandle.Peer.UNKNOWN;
    long grantNanos;
    long leaseEndNanos;
    /**
     * The longest lease (seconds) requested for the active grant, by its Acquire or any Extend:
     * a new cluster leader runs the lease for this long again (PROTOCOL.md section 10).
     */
    int maxLeaseSeconds;
    /** In lock-delay: the token whose lease ran out; else 0. */
    long delayedToken;
    long delayEndNanos;
    /**
     * The active exclusive grant's value (PROTOCOL.md section 17), or null: set by its {@code M} or
     * a {@code V}, gone with the grant (every way a grant ends clears it here).
     */
    private byte[] value;

    /** How it holds the key. */
    abstract HoldMode mode();

    /**
     * The active grant's value (PROTOCOL.md section 17: exclusive grants only), or null when it has
     * none or there is no active grant. The bytes are the hold's own: read them, never change them.
     */
    final byte[] value() {
        return value;
    }

    /**
     * Gives the active grant {@code newValue} (null or empty: none). Only {@code KeyMachine}
     * decides when (a grant with its {@code M}'s value, a {@code V}, a new leader's install).
     *
     * @return true if the value changed (compared byte for byte)
     */
    final boolean putValue(byte[] newValue) {
        byte[] v = newValue == null || newValue.length == 0 ? null : newValue;
        if (Arrays.equals(value, v)) {
            return false;
        }
        value = v;
        return true;
    }

    /** An active grant (not free, not in lock-delay). */
    final boolean isActive() {
        return token != 0;
    }

    /** In lock-delay: no grant, and the place kept until the delay ends. */
    final boolean isDelayed() {
        return delayedToken != 0;
    }

    /** Neither granted nor delayed. */
    final boolean isEmpty() {
        return token == 0 && delayedToken == 0;
    }

    /** True if {@code t} is this hold's active grant. */
    final boolean holds(long t) {
        return t != 0 && token == t;
    }

    /** True if the active grant's lease has reached its end, processed or not. */
    final boolean leaseOver(long now) {
        return now - leaseEndNanos >= 0;
    }

    /** The instant its timer should fire next: the lease end while active, else the delay end. */
    final long nextEventNanos() {
        return isActive() ? leaseEndNanos : delayEndNanos;
    }

    /** Starts an active grant of {@code newToken} (issued by the caller) at {@code now}. */
    final void start(long newToken, long now, int leaseSeconds, long leaseNanos) {
        token = newToken;
        value = null; // a grant has none until its M's value or a V sets it
        delayedToken = 0;
        grantNanos = now;
        leaseEndNanos = now + leaseNanos;
        maxLeaseSeconds = leaseSeconds;
    }

    /**
     * Where an Extend by {@code leaseNanos} at {@code now} would put the lease end: never earlier
     * than it is (an Extend never shortens a lease).
     */
    final long extendedEnd(long now, long leaseNanos) {
        return Math.max(leaseEndNanos, now + leaseNanos);
    }

    /** Applies an Extend decided with {@link #extendedEnd}. */
    final void extendTo(long end, int leaseSeconds) {
        leaseEndNanos = end;
        maxLeaseSeconds = Math.max(maxLeaseSeconds, leaseSeconds);
    }

    /** Ends the active grant at once (a Release, or a new leader's reset). */
    final void end() {
        token = 0;
        value = null;
    }

    /**
     * Ends the active grant if its lease is over at {@code now}.
     *
     * @return how long it was held (nanos), or -1 if nothing ended
     */
    final long expire(long now) {
        if (!isActive() || !leaseOver(now)) {
            return -1;
        }
        token = 0;
        value = null;
        return leaseEndNanos - grantNanos;
    }

    /**
     * Keeps the place of {@code expired} for {@code delayNanos} from {@code from} (the lease's end,
     * or, on a new leader, now: the delay is a duration, section 12).
     */
    final void delay(long expired, long from, long delayNanos) {
        token = 0;
        value = null;
        delayedToken = expired;
        delayEndNanos = from + delayNanos;
        maxLeaseSeconds = 0; // no grant: nothing for a new leader to run again
    }

    /** Ends the lock-delay if it is over at {@code now}: true if it ended now. */
    final boolean endDelay(long now) {
        if (delayedToken == 0 || now - delayEndNanos < 0) {
            return false;
        }
        delayedToken = 0;
        return true;
    }

    /** Forgets the lock-delay at once, however long it had to run (a new leader's reset). */
    final void clearDelay() {
        delayedToken = 0;
    }
}
