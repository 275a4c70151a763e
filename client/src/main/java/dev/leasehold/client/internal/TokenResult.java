package dev.leasehold.client.internal;

/** How a Release or Extend of one token ended. */
public sealed interface TokenResult permits TokenResult.Released, TokenResult.Extended, TokenResult.NotHeld,
        TokenResult.Expired {

    /** A correlated {@code R}. */
    record Released() implements TokenResult {
    }

    /**
     * A correlated {@code E}: the lease now runs at least until {@code validUntil} (9.6 with
     * queued_ms = 0) and has certainly ended by {@code leaseEndUpperBound}.
     */
    record Extended(long validUntil, long leaseEndUpperBound) implements TokenResult {
    }

    /** A correlated {@code N}: the token is not the key's active grant. */
    record NotHeld() implements TokenResult {
    }

    /** The retries gave up because the lease would have ended anyway. */
    record Expired() implements TokenResult {
    }
}
