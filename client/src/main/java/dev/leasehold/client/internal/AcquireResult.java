package dev.leasehold.client.internal;

/**
 * How an Acquire ended, before the public layer turns it into an outcome. A {@link Granted}
 * must still pass {@link AcquireCall#deliver the delivery gate}.
 */
public sealed interface AcquireResult permits AcquireResult.Granted, AcquireResult.TimedOut,
        AcquireResult.Busy, AcquireResult.Indeterminate, AcquireResult.Unavailable {

    /**
     * A correlated {@code A}. {@code validUntil} is the safe local end of the lease (9.6) and
     * {@code leaseEndUpperBound} the instant by which it has certainly ended.
     */
    record Granted(long token, long queuedMs, long validUntil, long leaseEndUpperBound) implements AcquireResult {
    }

    /** A correlated {@code T}. */
    record TimedOut() implements AcquireResult {
    }

    /** A correlated {@code B}. */
    record Busy() implements AcquireResult {
    }

    /** The request may have reached the server and no definitive answer can be delivered. */
    record Indeterminate(String reason) implements AcquireResult {
    }

    /** The request was definitely never sent. */
    record Unavailable(String reason) implements AcquireResult {
    }
}
