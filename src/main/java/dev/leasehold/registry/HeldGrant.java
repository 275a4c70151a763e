package dev.leasehold.registry;

/**
 * A grant that another node decided, as {@link LockRegistry#promote} installs it on a new
 * cluster leader: {@code key} held by {@code token}, whose longest requested lease was
 * {@code maxLeaseSeconds}; or, with {@code token} 0, a key in lock-delay after the expiry of
 * {@code delayedToken}, for {@code delaySeconds} (PROTOCOL.md section 12). Durations only: the
 * registry times them from its own clock.
 */
public record HeldGrant(byte[] key, long token, int maxLeaseSeconds, long delayedToken, int delaySeconds) {

    /** A held key (no lock-delay). */
    public HeldGrant(byte[] key, long token, int maxLeaseSeconds) {
        this(key, token, maxLeaseSeconds, 0, 0);
    }
}
