package dev.leasehold.client;

/** How a {@link Ticket#extend(int)} ended (PROTOCOL.md 9.10). */
public sealed interface ExtendOutcome permits ExtendOutcome.Extended, ExtendOutcome.NotHeld,
        ExtendOutcome.Expired {

    /**
     * The server extended the lease; the ticket is valid until {@code validUntilNanos}
     * ({@link System#nanoTime()} time, computed as for a grant with queued_ms = 0).
     *
     * @param validUntilNanos the ticket's new local validity deadline
     */
    record Extended(long validUntilNanos) implements ExtendOutcome {
    }

    /** The token is no longer the key's active grant (released or expired): stop acting as holder. */
    record NotHeld() implements ExtendOutcome {
    }

    /**
     * No answer could be obtained before the lease would have ended: treat it like
     * {@link NotHeld}. (An attempt whose answer was lost may have extended the lease on the
     * server; the client then keeps releasing on {@link Ticket#release()} until that extension
     * would have ended too.)
     */
    record Expired() implements ExtendOutcome {
    }
}
