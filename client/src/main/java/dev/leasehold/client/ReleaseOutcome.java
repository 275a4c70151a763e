package dev.leasehold.client;

/** How a {@link Ticket#release()} ended (PROTOCOL.md 9.10). */
public enum ReleaseOutcome {
    /** The server released the grant; the key is free for the next waiter. */
    RELEASED,
    /**
     * The token was no longer the key's active grant: its lease had ended (another holder may
     * have run meanwhile), or an earlier attempt of this same release, whose answer was lost,
     * had already released it.
     */
    NOT_HELD,
    /**
     * No answer could be obtained before the lease would have ended anyway: the grant is over
     * either way, so the client stopped retrying.
     */
    EXPIRED
}
