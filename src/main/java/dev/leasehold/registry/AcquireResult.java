package dev.leasehold.registry;

/** What the registry decided for an Acquire at its receipt. */
public sealed interface AcquireResult
        permits AcquireResult.Granted, AcquireResult.Queued, AcquireResult.TimedOut, AcquireResult.Busy,
        AcquireResult.LimitMismatch {

    /** Granted at once: answer {@code A} with queued_ms 0. */
    record Granted(long token) implements AcquireResult {
    }

    /**
     * Waiting in the key's queue; the answer comes later through the {@link WaiterNotifier}
     * (or never, if the session closes first).
     */
    record Queued(Waiter waiter) implements AcquireResult {
    }

    /** wait = 0 on a taken key: answer {@code T} at once. */
    record TimedOut() implements AcquireResult {
    }

    /** Answer {@code B} at once. */
    record Busy(BusyReason reason) implements AcquireResult {
    }

    /**
     * A shared acquire ({@code S}) whose limit is not the key's: answer {@code L} with the key's
     * {@code limit} (PROTOCOL.md section 13.2). Neither granted nor queued.
     */
    record LimitMismatch(int limit) implements AcquireResult {
    }

    TimedOut TIMED_OUT = new TimedOut();
}
