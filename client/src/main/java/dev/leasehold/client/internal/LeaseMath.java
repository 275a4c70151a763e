package dev.leasehold.client.internal;

import dev.leasehold.protocol.Wire;

/**
 * The time arithmetic of PROTOCOL.md section 9, in one place and free of I/O so it can be
 * tested directly. All instants are {@link System#nanoTime()} values; compare them with
 * subtraction ({@code a - b < 0}), never with {@code <} on the raw values.
 */
public final class LeaseMath {

    /** Nanoseconds in one second. */
    public static final long SECOND = 1_000_000_000L;

    /** Nanoseconds in one millisecond. */
    public static final long MILLI = 1_000_000L;

    private LeaseMath() {
    }

    /**
     * The wire wait for a call with deadline {@code deadline} written at {@code now} (9.5):
     * {@code ceil((deadline - now) / 1 s)}, capped at 255; or {@code -1} when the deadline has
     * passed (at {@code now == deadline} too), meaning the request must not be sent.
     */
    public static int wireWait(long deadline, long now) {
        long left = deadline - now;
        if (left <= 0) {
            return -1;
        }
        long seconds = (left + SECOND - 1) / SECOND;
        return (int) Math.min(Wire.MAX_SECONDS, seconds);
    }

    /** {@code ceil((deadline - now) / 1 s)} without the cap; callers check that the deadline has not passed. */
    public static long wireWaitUncapped(long deadline, long now) {
        return (deadline - now + SECOND - 1) / SECOND;
    }

    /**
     * The wire wait of an {@code M} (9.13): {@code ceil((deadline - now) / 1 ms)}, at least 1;
     * callers check that the deadline has not passed.
     */
    public static long wireWaitMillis(long deadline, long now) {
        return Math.max(1, (deadline - now + MILLI - 1) / MILLI);
    }

    /** A caller's wait kept to the millisecond (9.13): finer parts round up, a positive wait below 1 ms is 1 ms. */
    public static long waitMillis(long nanos) {
        return nanos <= 0 ? 0 : (nanos + MILLI - 1) / MILLI;
    }

    /**
     * The safety margin of 9.6: {@code max(floor, drift × (queued + lease))}, so clock-rate drift
     * is covered over the whole interval from the send to the lease end, not just the lease.
     */
    public static long marginNanos(long queuedMs, int leaseSeconds, long floorNanos, double driftRate) {
        long interval = queuedMs * MILLI + leaseSeconds * SECOND;
        long drift = (long) Math.ceil(driftRate * interval);
        return Math.max(floorNanos, drift);
    }

    /**
     * The local validity deadline of a grant (9.6):
     * {@code sendStart + queued_ms + lease - margin}. The server granted no earlier than
     * {@code sendStart + queued_ms} (it received the request after the client began writing it),
     * so its lease cannot end before this instant as long as the drift stays under the rate.
     */
    public static long validUntil(long sendStart, long queuedMs, int leaseSeconds, long floorNanos,
            double driftRate) {
        return sendStart + queuedMs * MILLI + leaseSeconds * SECOND
                - marginNanos(queuedMs, leaseSeconds, floorNanos, driftRate);
    }

    /**
     * An instant by which a lease of {@code leaseSeconds}, granted or extended no later than
     * {@code latestStart} (local time), has certainly ended on the server: the opposite bound to
     * {@link #validUntil}. Release and Extend retries give up here (9.10).
     */
    public static long leaseEndUpperBound(long latestStart, int leaseSeconds, long floorNanos, double driftRate) {
        return latestStart + leaseSeconds * SECOND + marginNanos(0, leaseSeconds, floorNanos, driftRate);
    }

    /** The earlier of two nanoTime instants. */
    public static long earliest(long a, long b) {
        return a - b <= 0 ? a : b;
    }

    /** The later of two nanoTime instants. */
    public static long latest(long a, long b) {
        return a - b >= 0 ? a : b;
    }
}
