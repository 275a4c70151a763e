package dev.leasehold.client;

/** Why a kept-alive lease was lost ({@link LeaseListener#leaseLost}). */
public enum LossReason {
    /**
     * An Extend answered NotHeld: the token is no longer the key's active grant (its lease ended
     * on the server, or someone released that token). Another holder may have the key.
     */
    NOT_HELD,
    /**
     * The ticket's local validity ({@link Ticket#validUntilNanos()}) ended without a successful
     * Extend (the server was unreachable or slow, or the process was paused).
     */
    VALIDITY_ENDED,
    /** The client was closed while the ticket was kept alive. */
    CLIENT_CLOSED
}
